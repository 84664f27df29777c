import { defineConfig, mergeConfig } from 'vitest/config';
import shared from '../vitest.shared.mjs';

export default mergeConfig(
  shared,
  defineConfig({
    // The libraries are packed once per run, for every test file.
    test: { globalSetup: ['test/global-setup.ts'] },
  }),
);
