import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

/** The export names a CommonJS process gets from `require()` of the built index (`npm run build` first). */
function requiredFromCommonJs(): string[] {
  const script = "process.stdout.write(JSON.stringify(Object.keys(require('./dist/index.js'))))";
  const cwd = join(import.meta.dirname, '..');
  return JSON.parse(execFileSync(process.execPath, ['--input-type=commonjs', '-e', script], { cwd, encoding: 'utf8' })) as string[];
}

describe('the public index, built', () => {
  it('loads with require() from CommonJS, exporting what the sources do: nothing it imports awaits at the top level', async () => {
    expect(requiredFromCommonJs().sort()).toEqual(Object.keys(await import('./index.js')).sort());
  });
});
