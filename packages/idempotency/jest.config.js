const base = require('../../jest.base.js');

module.exports = {
  ...base,
  // Tests that use the package as its users do import it by name: resolve that to the sources.
  moduleNameMapper: {
    '^@idempotency-chain/idempotency$': '<rootDir>/src/index.ts',
    '^@idempotency-chain/idempotency/(nest|redis|postgres|opentelemetry|testing)$': '<rootDir>/src/$1/index.ts',
  },
};
