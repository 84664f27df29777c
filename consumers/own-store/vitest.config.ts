import { defineConfig } from 'vitest/config';

// Vitest's default pattern is `*.test.ts`; the suite's file says which runner it is for.
export default defineConfig({ test: { include: ['conformance.vitest.ts'] } });
