import { mkdir, readdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { inject } from 'vitest';
import { runCommand } from './command';

/** The root of this repository, where `npm pack --workspace` runs. */
const REPO_ROOT = resolve(__dirname, '../..');

/** The published packages, in build order: the HTTP client depends on the idempotency package. */
export const LIBRARIES = ['@idempotency-chain/idempotency', '@idempotency-chain/http-client'] as const;

/** A published package's name. */
export type LibraryName = (typeof LIBRARIES)[number];

declare module 'vitest' {
  /** What `global-setup.ts` hands the test files. */
  export interface ProvidedContext {
    packedLibraries: Record<LibraryName, string>;
  }
}

/** The tarball of each library, packed once for this run by `global-setup.ts`. */
export function packedLibraries(): Record<LibraryName, string> {
  const packed = inject('packedLibraries');
  if (!packed) throw new Error("the libraries are not packed: run this workspace's tests through its vitest.config.mts");
  return packed;
}

/**
 * `npm pack` each library as a publish would (its `prepack` cleans and
 * rebuilds `dist`), each into its own folder under `destination`, and return
 * the tarball of each. Packed one at a time and in build order, since the
 * HTTP client's build reads the idempotency package's declarations.
 */
export async function packLibraries(destination: string): Promise<Record<LibraryName, string>> {
  const tarballs: Partial<Record<LibraryName, string>> = {};
  for (const name of LIBRARIES) {
    const folder = join(destination, name.replace(/[@/]/g, '_'));
    await mkdir(folder, { recursive: true });
    await runCommand('npm', ['pack', '--workspace', name, '--pack-destination', folder], { cwd: REPO_ROOT, timeoutMs: 600_000 });
    const [tarball, ...others] = (await readdir(folder)).filter((file) => file.endsWith('.tgz'));
    if (!tarball || others.length > 0)
      throw new Error(`npm pack of ${name} left ${others.length + (tarball ? 1 : 0)} tarballs in ${folder}`);
    tarballs[name] = join(folder, tarball);
  }
  return tarballs as Record<LibraryName, string>;
}
