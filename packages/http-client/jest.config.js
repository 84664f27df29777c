const base = require('../../jest.base.js');

module.exports = {
  ...base,
  // Test against the sibling package's source, so its tests and ours never
  // depend on whether (or how recently) its dist was built.
  moduleNameMapper: {
    '^@idempotency-chain/idempotency$': '<rootDir>/../idempotency/src/index.ts',
  },
};
