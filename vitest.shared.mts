import { defineConfig } from 'vitest/config';

/**
 * The Vitest settings every workspace but the apps (which carry their own)
 * extends in its vitest.config.mts: tests beside the code, in Node, one file
 * at a time (they share the real Redis and PostgreSQL), describe/it/expect
 * as globals. TypeScript goes through Vite's transform, which emits the
 * decorator metadata NestJS injects by (tsconfig.nest.json).
 */
export default defineConfig({
  test: {
    environment: 'node',
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    globals: true,
    fileParallelism: false,
    // A hook waits as long as a test: a server's start or a store's migration is part of the test.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    server: {
      deps: {
        // The workspaces' builds (dist/) load as Node loads them, not through Vite's transform: as
        // they run in production, and one copy of each module whether a test imports it or another
        // build (an app's dist requiring a library's) does.
        external: [/^(?!.*\/node_modules\/).*\/dist\//],
      },
    },
  },
});
