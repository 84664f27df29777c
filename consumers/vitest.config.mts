import { defineConfig, mergeConfig } from 'vitest/config';
import shared from '../vitest.shared.mjs';

export default mergeConfig(
  shared,
  defineConfig({
    test: {
      // The packages are packed once per run, for every test file.
      globalSetup: ['test/global-setup.ts'],
      // Every test by name, fast ones too: the log shows each check of the Node matrix on each release.
      reporters: ['verbose'],
      // At most two tests of a describe.concurrent at once (verifier-matrix.test.ts): two Python chains
      // halve the wall time, while more would add load against their timing margins.
      maxConcurrency: 2,
    },
  }),
);
