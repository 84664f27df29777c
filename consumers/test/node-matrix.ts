import { readFileSync } from 'node:fs';
import { delimiter, dirname, resolve } from 'node:path';

/** A Node.js release the tests run on, and its binary. */
export interface NodeRelease {
  version: string;
  binary: string;
}

/** The releases of the matrix, as `node-matrix.json` names them. */
interface Matrix {
  newest: string[];
  oldest: string[];
}

const MATRIX = resolve(__dirname, '../node-matrix.json');
/** Where `scripts/node-matrix.mjs` (run by the preflight) lists the binaries it provisioned. */
const PROVISIONED = resolve(__dirname, '../../node_modules/.cache/node-matrix/nodes.json');

/** The Node.js this test runs on: what installs and compiles the projects. */
export const HOST_NODE: NodeRelease = { version: process.versions.node, binary: process.execPath };

/** `versions`, each with the binary the preflight provisioned; throws, naming the command, when one is missing. */
function provisioned(versions: string[]): NodeRelease[] {
  let binaries: Record<string, string> = {};
  try {
    binaries = JSON.parse(readFileSync(PROVISIONED, 'utf8')) as Record<string, string>;
  } catch {
    // Reported below, with every missing release.
  }
  const missing = versions.filter((version) => binaries[version] === undefined);
  if (missing.length > 0) throw new Error(`Node.js ${missing.join(', ')} not provisioned: run bash scripts/preflight.sh`);
  return versions.map((version) => ({ version, binary: binaries[version]! }));
}

const matrix = (): Matrix => JSON.parse(readFileSync(MATRIX, 'utf8')) as Matrix;

/** The newest release of each supported major: every check of the matrix runs on each. */
export function newestReleases(): NodeRelease[] {
  return provisioned(matrix().newest);
}

/** The first release each `engines` range admits. */
export function oldestReleases(): NodeRelease[] {
  return provisioned(matrix().oldest);
}

/**
 * The newest releases and the first release each `engines` range admits:
 * what the published libraries are run on (their lower bounds are where
 * `require(esm)`, which a NestJS 12 app needs of them, first works).
 */
export function everyRelease(): NodeRelease[] {
  const { newest, oldest } = matrix();
  return provisioned([...newest, ...oldest]);
}

/**
 * An environment whose `node` is `release`: its folder first on `PATH`, so
 * `npm run` and every `#!/usr/bin/env node` script it starts (tsc, vitest)
 * run on that release, as on a machine that has only it.
 */
export function pathFor(release: NodeRelease): Record<string, string> {
  return { PATH: `${dirname(release.binary)}${delimiter}${process.env.PATH ?? ''}` };
}
