/**
 * Shared Jest settings: TypeScript through SWC with legacy decorators and
 * decorator metadata (what NestJS needs), tests beside the code.
 */
const swc = [
  '@swc/jest',
  {
    jsc: {
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true },
      target: 'es2022',
    },
    module: { type: 'commonjs' },
  },
];

module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/src', '<rootDir>/test'].filter((dir) => require('node:fs').existsSync(dir.replace('<rootDir>', process.cwd()))),
  testMatch: ['**/*.test.ts'],
  transform: {
    '^.+\\.ts$': swc,
    // @nestjs/config 12 ships ES modules only: Node requires them, Jest (before Node 24.9) needs them compiled.
    '/node_modules/@nestjs/config/.+\\.js$': swc,
  },
  transformIgnorePatterns: ['/node_modules/(?!@nestjs/config/)'],
  testTimeout: 30000,
};
