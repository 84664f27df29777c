import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { packLibraries } from './library-tarballs';

/**
 * Packs the two libraries once for every test file of this workspace (packing
 * rebuilds each one), into a temp folder removed once the run is over. The
 * tests read where the tarballs are through `packedLibraries()`.
 */
export default async function globalSetup(project: TestProject): Promise<() => Promise<void>> {
  const folder = await mkdtemp(join(tmpdir(), 'idempotency-tarballs-'));
  try {
    project.provide('packedLibraries', await packLibraries(folder));
  } catch (error) {
    await rm(folder, { recursive: true, force: true });
    throw error;
  }
  return () => rm(folder, { recursive: true, force: true });
}
