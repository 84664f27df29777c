import { rm } from 'node:fs/promises';
import { PACKED_LIBRARIES_ENV } from './library-tarballs';

/** Removes the tarballs `global-setup.ts` packed. */
export default async function globalTeardown(): Promise<void> {
  const packed = process.env[PACKED_LIBRARIES_ENV];
  if (packed) await rm((JSON.parse(packed) as { folder: string }).folder, { recursive: true, force: true });
}
