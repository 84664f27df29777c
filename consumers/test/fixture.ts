import { execFile } from 'node:child_process';
import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { runCommand } from './command';
import { LIBRARIES, PUBLISHED, type PublishedName, type Tarballs } from './packed-packages';

const execFileAsync = promisify(execFile);

/** The committed manifest and lock of each project the tests install outside the workspace. */
export const FIXTURES = resolve(__dirname, '../fixtures');
/** The apps of this repository, each a folder a team may copy alone. */
export const APPS = resolve(__dirname, '../../apps');

/** The apps a team copies out: their manifest is the app's own, their lock is kept here. */
export const APP_FIXTURES = ['gateway', 'orders', 'payments'] as const;
/** The scratch projects: a NestJS 11 and a NestJS 12 app, a store of its own, the verifier's CLI. */
const SCRATCH_FIXTURES = ['nest11', 'nest12', 'own-store', 'verify'] as const;
/** Every project installed from a committed lock. */
export const FIXTURE_NAMES = [...SCRATCH_FIXTURES, ...APP_FIXTURES] as const;
/** A project installed from a committed lock. */
export type FixtureName = (typeof FIXTURE_NAMES)[number];

/** Where a project keeps the packed packages: one path every run, so its lock records the same path. */
const TARBALLS = 'tarballs';
/** How to regenerate the locks, for every message that says one is stale. */
const LOCK_COMMAND = 'npm run fixtures:lock -w @idempotency-chain/consumers';

/** A package.json as far as an install reads it. */
export interface Manifest {
  scripts?: Record<string, string>;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  [field: string]: unknown;
}

/** A package-lock.json (lockfileVersion 3) as far as the fixtures read it. */
export interface Lock {
  packages: Record<string, LockedPackage>;
  [field: string]: unknown;
}

/** One installed package as a lock records it. */
interface LockedPackage {
  version?: string;
  resolved?: string;
  integrity?: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  [field: string]: unknown;
}

/** The `file:` spec of a packed package inside a project. */
function tarballSpec(name: PublishedName): string {
  return `file:${TARBALLS}/${name.slice(name.indexOf('/') + 1)}.tgz`;
}

/** The packages of this repository a manifest depends on. */
function packedDependencies(manifest: Manifest): PublishedName[] {
  const all = { ...manifest.dependencies, ...manifest.devDependencies };
  return PUBLISHED.filter((name) => all[name] !== undefined);
}

/**
 * What a fixture installs: a scratch project's own manifest, or an app's
 * with its libraries pointed at their tarballs (what a team has before the
 * libraries are on its registry).
 */
async function fixtureManifest(fixture: FixtureName): Promise<Manifest> {
  if (!(APP_FIXTURES as readonly string[]).includes(fixture)) {
    return JSON.parse(await readFile(join(FIXTURES, fixture, 'package.json'), 'utf8')) as Manifest;
  }
  const manifest = JSON.parse(await readFile(join(APPS, fixture, 'package.json'), 'utf8')) as Manifest;
  for (const library of LIBRARIES) {
    if (manifest.dependencies?.[library]) manifest.dependencies[library] = tarballSpec(library);
  }
  return manifest;
}

/** The committed lock of a fixture. */
export async function committedLock(fixture: FixtureName): Promise<Lock> {
  return JSON.parse(await readFile(join(FIXTURES, fixture, 'package-lock.json'), 'utf8')) as Lock;
}

/**
 * Which versions the tests install: the committed locks (`locked`, what CI
 * runs, so a verdict depends on this repository alone) or the newest
 * releases the manifests allow (`latest`, `npm run test:latest`).
 */
function dependencySource(): 'locked' | 'latest' {
  const source = process.env.FIXTURE_DEPS ?? 'locked';
  if (source !== 'locked' && source !== 'latest') throw new Error(`FIXTURE_DEPS=${source}: expected locked or latest`);
  return source;
}

/** Write a fixture's manifest into `folder` and copy in the tarballs it names. */
export async function prepareFixture(folder: string, fixture: FixtureName, tarballs: Tarballs): Promise<Manifest> {
  const manifest = await fixtureManifest(fixture);
  await mkdir(join(folder, TARBALLS), { recursive: true });
  for (const name of packedDependencies(manifest)) {
    await copyFile(tarballs[name], join(folder, tarballSpec(name).slice('file:'.length)));
  }
  await writeFile(join(folder, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  return manifest;
}

/** A manifest field as text, its keys in order: npm sorts what it records. */
function sorted(value: unknown): string {
  if (typeof value !== 'object' || value === null) return JSON.stringify(value ?? {});
  return JSON.stringify(Object.entries(value).sort(([a], [b]) => a.localeCompare(b)));
}

/** The fields of a package's manifest that a lock records and `npm ci` acts on without reading the package again. */
const RECORDED_FIELDS = [
  'version',
  'dependencies',
  'optionalDependencies',
  'peerDependencies',
  'peerDependenciesMeta',
  'bin',
  'engines',
  'os',
  'cpu',
] as const;

/** Scripts that make npm record `hasInstallScript`, and run them on install. */
const INSTALL_SCRIPTS = ['preinstall', 'install', 'postinstall'];

/**
 * How the lock's record of each packed package differs from the package
 * itself: a library that gained a dependency, moved its bin or added an
 * install script since the lock was written would install as the lock
 * remembers it, not as a team's install gets it.
 */
async function staleRecords(folder: string, manifest: Manifest, lock: Lock): Promise<string[]> {
  const stale: string[] = [];
  for (const name of packedDependencies(manifest)) {
    const tarball = join(folder, tarballSpec(name).slice('file:'.length));
    const { stdout } = await execFileAsync('tar', ['-xzOf', tarball, 'package/package.json']);
    const packed = JSON.parse(stdout) as LockedPackage & { scripts?: Record<string, string> };
    const recorded = lock.packages[`node_modules/${name}`] ?? {};
    for (const field of RECORDED_FIELDS) {
      if (sorted(recorded[field]) !== sorted(field === 'bin' ? binOf(name, packed.bin) : packed[field])) stale.push(`${name}'s ${field}`);
    }
    const installs = INSTALL_SCRIPTS.some((script) => packed.scripts?.[script] !== undefined);
    if (installs !== (recorded.hasInstallScript === true)) stale.push(`${name}'s install scripts`);
  }
  return stale;
}

/** A manifest's `bin` as npm records it: a lone path is the package's own name, paths without a leading `./`. */
function binOf(name: string, bin: unknown): unknown {
  const bins = typeof bin === 'string' ? { [name.slice(name.indexOf('/') + 1)]: bin } : (bin as Record<string, string> | undefined);
  return bins && Object.fromEntries(Object.entries(bins).map(([command, path]) => [command, path.replace(/^\.\//, '')]));
}

/**
 * Install a fixture into `folder`, outside the workspace: its manifest, the
 * packed packages it names, and from the registry either exactly what its
 * committed lock pins (`npm ci`) or the newest releases (`latest`).
 * npm's cache makes a repeated run an offline one.
 */
export async function installFixture(folder: string, fixture: FixtureName, tarballs: Tarballs, timeoutMs: number): Promise<void> {
  const manifest = await prepareFixture(folder, fixture, tarballs);
  const quiet = ['--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error'];
  if (dependencySource() === 'latest') {
    await runCommand('npm', ['install', ...quiet, '--no-package-lock'], { cwd: folder, timeoutMs });
    return;
  }
  const lock = await committedLock(fixture);
  const stale = await staleRecords(folder, manifest, lock);
  if (stale.length > 0) {
    throw new Error(`consumers/fixtures/${fixture}/package-lock.json is stale (${stale.join(', ')}): run ${LOCK_COMMAND}`);
  }
  await writeFile(join(folder, 'package-lock.json'), `${JSON.stringify(lock, null, 2)}\n`);
  await runCommand('npm', ['ci', ...quiet], { cwd: folder, timeoutMs }).catch((error: unknown) => {
    throw new Error(`npm ci of consumers/fixtures/${fixture} failed; if its manifest changed, run ${LOCK_COMMAND}:\n${String(error)}`, {
      cause: error,
    });
  });
}
