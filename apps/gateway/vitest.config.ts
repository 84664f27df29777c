import { defineConfig } from 'vitest/config';

/**
 * This app's own Vitest settings, so that a copy of the folder runs its tests
 * as they are. Vite compiles the TypeScript with the decorators and their
 * metadata that tsconfig.json asks for (experimentalDecorators,
 * emitDecoratorMetadata: what NestJS injects by).
 */
export default defineConfig({
  test: {
    globals: true,
    root: './',
    include: ['src/**/*.test.ts'],
    // One file at a time: the e2e tests share one Redis, PostgreSQL and RabbitMQ.
    fileParallelism: false,
    // Concurrent tests (the bad-environment boots, a process each) two at a time: one per core.
    maxConcurrency: 2,
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
