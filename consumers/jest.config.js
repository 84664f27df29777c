// The libraries are packed once per run, for every test file (test/global-setup.ts).
module.exports = {
  ...require('../jest.base.js'),
  globalSetup: '<rootDir>/test/global-setup.ts',
  globalTeardown: '<rootDir>/test/global-teardown.ts',
};
