import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PACKED_LIBRARIES_ENV, packLibraries } from './library-tarballs';

/**
 * Packs the two libraries once for every test file of this workspace (packing
 * rebuilds each one), into a temp folder that `global-teardown.ts` removes.
 * The tests read where the tarballs are through `packedLibraries()`.
 */
export default async function globalSetup(): Promise<void> {
  const folder = await mkdtemp(join(tmpdir(), 'idempotency-tarballs-'));
  process.env[PACKED_LIBRARIES_ENV] = JSON.stringify({ folder, tarballs: await packLibraries(folder) });
}
