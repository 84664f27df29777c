import { readFileSync } from 'node:fs';
import { delimiter, dirname, resolve } from 'node:path';

/** A Node.js release the tests run on, and its binary. */
export interface NodeRelease {
  version: string;
  binary: string;
}

const MATRIX = resolve(__dirname, '../node-matrix.json');
/** Where `scripts/node-matrix.mjs` (run by the preflight) lists the binaries it provisioned. */
const PROVISIONED = resolve(__dirname, '../../node_modules/.cache/node-matrix/nodes.json');

/** The Node.js this test runs on: the machine's own. */
export const HOST_NODE: NodeRelease = { version: process.versions.node, binary: process.execPath };

/**
 * The other releases of the matrix (`node-matrix.json`), as the preflight
 * provisioned them; throws, naming the command, when one is missing.
 */
export function matrixNodes(): NodeRelease[] {
  const { versions } = JSON.parse(readFileSync(MATRIX, 'utf8')) as { versions: string[] };
  let provisioned: Record<string, string> = {};
  try {
    provisioned = JSON.parse(readFileSync(PROVISIONED, 'utf8')) as Record<string, string>;
  } catch {
    // Reported below, with every missing release.
  }
  const missing = versions.filter((version) => provisioned[version] === undefined);
  if (missing.length > 0) throw new Error(`Node.js ${missing.join(', ')} not provisioned: run bash scripts/preflight.sh`);
  return versions.map((version) => ({ version, binary: provisioned[version]! }));
}

/** The machine's Node.js, then the matrix's releases. */
export function allNodes(): NodeRelease[] {
  return [HOST_NODE, ...matrixNodes()];
}

/**
 * An environment whose `node` is `release`: its folder first on `PATH`, so
 * `npm run` and every `#!/usr/bin/env node` script it starts (tsc, vitest)
 * run on that release, as on a machine that has only it.
 */
export function pathFor(release: NodeRelease): Record<string, string> {
  return { PATH: `${dirname(release.binary)}${delimiter}${process.env.PATH ?? ''}` };
}
