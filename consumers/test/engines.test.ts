import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { minVersion, Range, satisfies } from 'semver';
import { APP_FIXTURES, APPS } from './fixture';
import { PUBLISHED } from './packed-packages';

const PACKAGES = resolve(__dirname, '../../packages');
const { newest, oldest } = JSON.parse(readFileSync(resolve(__dirname, '../node-matrix.json'), 'utf8')) as {
  newest: string[];
  oldest: string[];
};

/** The `engines.node` range a package.json declares. */
function declared(folder: string): string {
  const manifest = JSON.parse(readFileSync(resolve(folder, 'package.json'), 'utf8')) as { engines?: { node?: string } };
  if (!manifest.engines?.node) throw new Error(`${folder}/package.json declares no engines.node`);
  return manifest.engines.node;
}

/** The first release of each `||` branch of a range: `^22.17.0 || ^24.1.0` starts at 22.17.0 and 24.1.0. */
function lowerBounds(range: string): string[] {
  return new Range(range).set.map((comparators) => minVersion(new Range(comparators.map(String).join(' ')))!.version);
}

/** What a range promises against what the matrix runs: each branch's newest and first release run, and nothing run is refused. */
function untested(range: string): { lowerBoundsNotRun: string[]; majorsWithoutNewest: string[]; runButRefused: string[] } {
  const bounds = lowerBounds(range);
  return {
    lowerBoundsNotRun: bounds.filter((bound) => !oldest.includes(bound)),
    majorsWithoutNewest: bounds.filter((bound) => !newest.some((version) => version.split('.')[0] === bound.split('.')[0])),
    runButRefused: newest.filter(
      (version) => bounds.some((bound) => bound.split('.')[0] === version.split('.')[0]) && !satisfies(version, range),
    ),
  };
}

const NOTHING_UNTESTED = { lowerBoundsNotRun: [], majorsWithoutNewest: [], runButRefused: [] };

// What `engines` promises is what the tests run (node-matrix.json): the first release of each range and the newest of its major.
describe('engines.node says which Node.js releases are tested', () => {
  it.each(PUBLISHED.map((name) => [name, resolve(PACKAGES, name.slice(name.indexOf('/') + 1))]))(
    '%s: the first release of each range and the newest of its major are in the matrix',
    (_name, folder) => {
      expect(untested(declared(folder))).toEqual(NOTHING_UNTESTED);
    },
  );

  it.each(APP_FIXTURES)('apps/%s: the same, from Node 22 on, which its NestJS 12 dependencies require', (app) => {
    const range = declared(resolve(APPS, app));
    expect(untested(range)).toEqual(NOTHING_UNTESTED);
    expect(lowerBounds(range).every((bound) => satisfies(bound, '>=22'))).toBe(true);
  });

  it('names one newest release per major and one first release per range, as exact versions', () => {
    for (const version of [...newest, ...oldest]) expect(version).toMatch(/^\d+\.\d+\.\d+$/);
    expect(new Set(newest.map((version) => version.split('.')[0])).size).toBe(newest.length);
  });
});
