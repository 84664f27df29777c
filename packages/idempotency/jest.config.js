const base = require('../../jest.base.js');

module.exports = {
  ...base,
  // Exit once the run is over. A clean-clone run hung after "Ran all test suites", its main thread
  // spinning in Node's exit-time handle clean-up on two TCP sockets that never finished closing; the
  // test that leaves them is not found yet. Every test still closes what it opens.
  forceExit: true,
  // Tests that use the package as its users do import it by name: resolve that to the sources.
  moduleNameMapper: {
    '^@idempotency-chain/idempotency$': '<rootDir>/src/index.ts',
    '^@idempotency-chain/idempotency/(nest|redis|postgres|opentelemetry|testing)$': '<rootDir>/src/$1/index.ts',
  },
};
