// The committed locks of the projects the tests install outside the workspace
// (consumers/fixtures/<name>/package-lock.json).
//
//   write: packs the published packages and resolves each fixture's manifest
//          starting from the workspace's own lock, so every package the
//          workspace already pins keeps its version; the rest (NestJS 11, say)
//          is the newest release its range allows today.
//   drift: resolves each manifest afresh, from nothing but the registry, and
//          lists what moved since the committed lock: what `npm run
//          test:latest` then installs.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { runCommand } from '../test/command';
import { committedLock, FIXTURE_NAMES, FIXTURES, prepareFixture, type FixtureName, type Lock } from '../test/fixture';
import { packPublished, type Tarballs } from '../test/packed-packages';

const WORKSPACE_LOCK = resolve(__dirname, '../../package-lock.json');

/** Resolve a fixture's lock in `folder` with npm, starting from `seed` when given; nothing is installed. */
async function resolveLock(folder: string, fixture: FixtureName, tarballs: Tarballs, seed: Lock | undefined): Promise<Lock> {
  const manifest = await prepareFixture(folder, fixture, tarballs);
  if (seed) {
    // The workspace's lock with this fixture as its root: npm keeps every locked version the manifest allows and prunes the rest.
    const root = { name: manifest.name, dependencies: manifest.dependencies, devDependencies: manifest.devDependencies };
    await writeFile(
      join(folder, 'package-lock.json'),
      JSON.stringify({ ...seed, name: manifest.name, packages: { ...seed.packages, '': root } }),
    );
  }
  await runCommand('npm', ['install', '--package-lock-only', '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd: folder,
    timeoutMs: 600_000,
  });
  const lock = JSON.parse(await readFile(join(folder, 'package-lock.json'), 'utf8')) as Lock;
  // A packed package's bytes change with every build: the lock keeps its path, never a hash of one build.
  for (const record of Object.values(lock.packages)) if (record.resolved?.startsWith('file:')) delete record.integrity;
  return lock;
}

/** The versions of every registry package a lock installs, by name: where npm nests a copy is not a change. */
function versions(lock: Lock): Map<string, string> {
  const found = new Map<string, Set<string>>();
  for (const [path, record] of Object.entries(lock.packages)) {
    if (!path.startsWith('node_modules/') || !record.version || record.resolved?.startsWith('file:')) continue;
    const name = path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);
    found.set(name, (found.get(name) ?? new Set()).add(record.version));
  }
  return new Map([...found].map(([name, set]) => [name, [...set].sort().join(', ')]));
}

/** What moved between two locks: one line per package. */
function drift(locked: Lock, latest: Lock): string[] {
  const before = versions(locked);
  const after = versions(latest);
  const lines: string[] = [];
  for (const [name, version] of after) {
    const was = before.get(name);
    if (was !== version) lines.push(`${name} ${was ?? '(new)'} -> ${version}`);
  }
  for (const [name, version] of before) if (!after.has(name)) lines.push(`${name} ${version} -> (gone)`);
  return lines.sort();
}

async function main(mode: string | undefined): Promise<void> {
  if (mode !== 'write' && mode !== 'drift') throw new Error('usage: fixture-locks write | drift');
  const work = await mkdtemp(join(tmpdir(), 'fixture-locks-'));
  try {
    const tarballs = await packPublished(join(work, 'tarballs'));
    const seed = mode === 'write' ? (JSON.parse(await readFile(WORKSPACE_LOCK, 'utf8')) as Lock) : undefined;
    for (const fixture of FIXTURE_NAMES) {
      if (mode === 'write') {
        const lock = await resolveLock(join(work, fixture), fixture, tarballs, seed);
        await writeFile(join(FIXTURES, fixture, 'package-lock.json'), `${JSON.stringify(lock, null, 2)}\n`);
        console.log(`fixture-locks: ${fixture}: ${versions(lock).size} packages locked`);
        continue;
      }
      // A registry whose newest releases do not resolve is news too: say so, and go on to the next fixture.
      const lock = await resolveLock(join(work, fixture), fixture, tarballs, seed).catch((error: unknown) => error as Error);
      if (lock instanceof Error) {
        const reason = /npm error (?:notarget|404) (.*)/.exec(lock.message)?.[1] ?? lock.message.split('\n')[0];
        console.log(`drift: ${fixture}: the newest releases do not resolve: ${reason}`);
        continue;
      }
      const moved = drift(await committedLock(fixture), lock);
      console.log(`drift: ${fixture}: ${moved.length === 0 ? 'none' : `${moved.length} packages moved`}`);
      for (const line of moved) console.log(`  ${line}`);
    }
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

main(process.argv[2]).catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
