import { defineConfig, mergeConfig } from 'vitest/config';
import shared from '../../vitest.shared.mjs';

const idempotency = `${import.meta.dirname}/../idempotency/src`;

export default mergeConfig(
  shared,
  defineConfig({
    // Test against the sibling package's source, so its tests and ours never
    // depend on whether (or how recently) its dist was built.
    resolve: {
      alias: [
        { find: /^@idempotency-chain\/idempotency$/, replacement: `${idempotency}/index.ts` },
        { find: /^@idempotency-chain\/idempotency\/(opentelemetry|nest)$/, replacement: `${idempotency}/$1/index.ts` },
      ],
    },
    test: {
      // Run in a zone away from UTC, so a date read as local time (asctime through
      // Date.parse, say) shows up as wrong instead of passing by luck on a UTC host.
      env: { TZ: 'America/New_York' },
    },
  }),
);
