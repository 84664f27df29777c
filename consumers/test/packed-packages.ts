import { mkdir, readdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { runCommand } from './command';

/** The root of this repository, where `npm pack --workspace` runs. */
const REPO_ROOT = resolve(__dirname, '../..');

/** The libraries an app depends on, in build order: the HTTP client depends on the idempotency package. */
export const LIBRARIES = ['@idempotency-chain/idempotency', '@idempotency-chain/http-client'] as const;

/** A published library's name. */
export type LibraryName = (typeof LIBRARIES)[number];

/** Every package this repository publishes: the libraries, then the verifier, a tool a team installs beside them. */
export const PUBLISHED = [...LIBRARIES, '@idempotency-chain/verify'] as const;

/** A published package's name. */
export type PublishedName = (typeof PUBLISHED)[number];

/** Where `npm pack` put each published package. */
export type Tarballs = Record<PublishedName, string>;

/**
 * `npm pack` each published package as a publish would (a `prepack` cleans
 * and rebuilds `dist`), each into its own folder under `destination`, and
 * return the tarball of each. Packed one at a time and in build order, since
 * the HTTP client's build reads the idempotency package's declarations.
 */
export async function packPublished(destination: string): Promise<Tarballs> {
  const tarballs: Partial<Tarballs> = {};
  for (const name of PUBLISHED) {
    const folder = join(destination, name.replace(/[@/]/g, '_'));
    await mkdir(folder, { recursive: true });
    await runCommand('npm', ['pack', '--workspace', name, '--pack-destination', folder], { cwd: REPO_ROOT, timeoutMs: 600_000 });
    const [tarball, ...others] = (await readdir(folder)).filter((file) => file.endsWith('.tgz'));
    if (!tarball || others.length > 0)
      throw new Error(`npm pack of ${name} left ${others.length + (tarball ? 1 : 0)} tarballs in ${folder}`);
    tarballs[name] = join(folder, tarball);
  }
  return tarballs as Tarballs;
}
