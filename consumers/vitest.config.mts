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
    },
  }),
);
