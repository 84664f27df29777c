const base = require('../../jest.base.js');

// Run in a zone away from UTC, so a date read as local time (asctime through
// Date.parse, say) shows up as wrong instead of passing by luck on a UTC host.
process.env.TZ = 'America/New_York';

module.exports = {
  ...base,
  // Test against the sibling package's source, so its tests and ours never
  // depend on whether (or how recently) its dist was built.
  moduleNameMapper: {
    '^@idempotency-chain/idempotency$': '<rootDir>/../idempotency/src/index.ts',
    '^@idempotency-chain/idempotency/(opentelemetry|nest)$': '<rootDir>/../idempotency/src/$1/index.ts',
  },
};
