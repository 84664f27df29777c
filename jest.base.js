/**
 * Shared Jest settings: TypeScript through SWC with legacy decorators and
 * decorator metadata (what NestJS needs), tests beside the code.
 */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/src', '<rootDir>/test'].filter((dir) => require('node:fs').existsSync(dir.replace('<rootDir>', process.cwd()))),
  testMatch: ['**/*.test.ts'],
  transform: {
    '^.+\\.ts$': [
      '@swc/jest',
      {
        jsc: {
          parser: { syntax: 'typescript', decorators: true },
          transform: { legacyDecorator: true, decoratorMetadata: true },
          target: 'es2022',
        },
        module: { type: 'commonjs' },
      },
    ],
  },
  testTimeout: 30000,
};
