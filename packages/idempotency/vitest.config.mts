import { defineConfig, mergeConfig } from 'vitest/config';
import shared from '../../vitest.shared.mjs';

const src = `${import.meta.dirname}/src`;

export default mergeConfig(
  shared,
  defineConfig({
    // Tests that use the package as its users do import it by name: resolve that to the sources.
    resolve: {
      alias: [
        { find: /^@idempotency-chain\/idempotency$/, replacement: `${src}/index.ts` },
        {
          find: /^@idempotency-chain\/idempotency\/(nest|redis|postgres|opentelemetry|diagnostics-channel|operator|testing)$/,
          replacement: `${src}/$1/index.ts`,
        },
        { find: /^@idempotency-chain\/idempotency\/store$/, replacement: `${src}/store-contract/index.ts` },
        { find: /^@idempotency-chain\/idempotency\/errors$/, replacement: `${src}/errors.ts` },
      ],
    },
  }),
);
