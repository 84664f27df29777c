import { defineConfig, mergeConfig } from 'vitest/config';
import shared from '../../vitest.shared.mjs';

export default mergeConfig(
  shared,
  defineConfig({
    test: {
      // At most two tests of a describe.concurrent at once (python-chain.test.ts): each waits on its
      // chain's timeouts far more than it computes, so two halve the wall time, while more would add
      // load against the chains' timing margins (a 1.5 s hold against a 1 s timeout).
      maxConcurrency: 2,
    },
  }),
);
