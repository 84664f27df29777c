const { dirname, join } = require('node:path');
const base = require('../jest.base.js');

/**
 * The base settings, plus the ES-module-only packages the charts load
 * (Vega, Vega-Lite and their d3 modules) and the services' `@nestjs/config`,
 * compiled to CommonJS like the sources: Jest's module loader cannot import
 * them as they ship.
 */
const ESM_ONLY = [
  'vega',
  'vega-[^/]+',
  'd3-[^/]+',
  'internmap',
  'delaunator',
  'robust-predicates',
  'json-stringify-pretty-compact',
  'yargs',
  'yargs-parser',
  'cliui',
  'string-width',
  'get-east-asian-width',
  'strip-ansi',
  'ansi-regex',
  'wrap-ansi',
  'ansi-styles',
  'y18n',
  // The services' configuration (`@nestjs/config` 12 ships ES modules only), for the tests that boot them.
  '@nestjs/config',
];

module.exports = {
  ...base,
  transform: {
    ...base.transform,
    '^.+\\.m?js$': ['@swc/jest', { jsc: { parser: { syntax: 'ecmascript' }, target: 'es2022' }, module: { type: 'commonjs' } }],
  },
  transformIgnorePatterns: [`/node_modules/(?!(${ESM_ONLY.join('|')})/)`],
  // Its Node build awaits an optional `canvas` at the top level, which CommonJS cannot;
  // without `canvas` installed both builds behave alike (text widths estimated).
  moduleNameMapper: { '^vega-canvas$': join(dirname(require.resolve('vega-canvas')), 'vega-canvas.browser.js') },
};
