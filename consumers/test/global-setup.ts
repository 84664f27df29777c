import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { packPublished } from './packed-packages';

/**
 * Packs the published packages once for every test file of this workspace
 * (packing rebuilds each one), into a temp folder removed once the run is
 * over. The tests read where the tarballs are through `packedPackages()`.
 */
export default async function globalSetup(project: TestProject): Promise<() => Promise<void>> {
  const folder = await mkdtemp(join(tmpdir(), 'idempotency-tarballs-'));
  try {
    project.provide('packedPackages', await packPublished(folder));
  } catch (error) {
    await rm(folder, { recursive: true, force: true });
    throw error;
  }
  return () => rm(folder, { recursive: true, force: true });
}
