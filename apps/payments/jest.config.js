/**
 * This app's own Jest settings, so that a copy of the folder runs its tests
 * as they are: TypeScript through SWC with legacy decorators and decorator
 * metadata (what NestJS needs), and @nestjs/config compiled too (12 ships ES
 * modules only: Node requires them, Jest before Node 24.9 needs them compiled).
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
  roots: ['<rootDir>/src'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': swc, '/node_modules/@nestjs/config/.+\\.js$': swc },
  transformIgnorePatterns: ['/node_modules/(?!@nestjs/config/)'],
  testTimeout: 30000,
};
