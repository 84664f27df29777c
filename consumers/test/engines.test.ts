import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { minVersion, Range, satisfies } from 'semver';
import { APP_FIXTURES, APPS } from './fixture';
import { HOST_NODE, matrixNodes } from './node-matrix';
import { PUBLISHED } from './packed-packages';

const PACKAGES = resolve(__dirname, '../../packages');

/** The `engines.node` range a package.json declares. */
function declared(folder: string): string {
  const manifest = JSON.parse(readFileSync(resolve(folder, 'package.json'), 'utf8')) as { engines?: { node?: string } };
  if (!manifest.engines?.node) throw new Error(`${folder}/package.json declares no engines.node`);
  return manifest.engines.node;
}

/** The majors a range admits, one per `||` branch: `^22.12.0 || ^24.0.0` admits 22 and 24. */
function majors(range: string): number[] {
  return new Range(range).set.map((comparators) => minVersion(new Range(comparators.map(String).join(' ')))!.major);
}

// What `engines` promises is what the tests run: every major it admits has a release in the matrix, and every release the tests run a project on is admitted.
describe('engines.node says which Node.js releases are tested', () => {
  const tested = [HOST_NODE, ...matrixNodes()].map((node) => node.version);

  it.each(PUBLISHED.map((name) => [name, resolve(PACKAGES, name.slice(name.indexOf('/') + 1))]))(
    '%s: every release of the matrix, and no major it does not test',
    (_name, folder) => {
      const range = declared(folder);
      expect(tested.filter((version) => !satisfies(version, range))).toEqual([]);
      expect(majors(range).filter((major) => !tested.some((version) => version.startsWith(`${major}.`)))).toEqual([]);
    },
  );

  it.each(APP_FIXTURES)('apps/%s: every release of the matrix from Node 22 on, which its NestJS 12 dependencies require', (app) => {
    const range = declared(resolve(APPS, app));
    const supported = tested.filter((version) => !version.startsWith('20.'));
    expect(supported.filter((version) => !satisfies(version, range))).toEqual([]);
    expect(majors(range).filter((major) => !supported.some((version) => version.startsWith(`${major}.`)))).toEqual([]);
    expect(majors(range)).not.toContain(20);
  });
});
