import { inject } from 'vitest';
import type { Tarballs } from './packed-packages';

declare module 'vitest' {
  /** What `global-setup.ts` hands the test files. */
  export interface ProvidedContext {
    packedPackages: Tarballs;
  }
}

/** The tarball of each published package, packed once for this run by `global-setup.ts`. */
export function packedPackages(): Tarballs {
  const packed = inject('packedPackages');
  if (!packed) throw new Error("the packages are not packed: run this workspace's tests through its vitest.config.mts");
  return packed;
}
