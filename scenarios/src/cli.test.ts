import { existsSync, readdirSync } from 'node:fs';
import { runCommand, tempRoot } from './cli.test-support';
import { SCENARIO_IDS } from './selection';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

describe('the runner command line', () => {
  it('--list prints every scenario id and runs nothing', async () => {
    const run = await runCommand('main.js', ['--list']);
    expect(run.code).toBe(0);
    expect(
      run.stdout
        .trim()
        .split('\n')
        .map((line) => line.split(/\s+/)[0]),
    ).toEqual(SCENARIO_IDS);
  });

  it('refuses an unknown id in SCENARIOS, lists the valid ones, and writes nothing', async () => {
    const root = tempRoot('unknown');
    const run = await runCommand('main.js', ['--out', root], { SCENARIOS: 'write-up,doubleclick' });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('unknown scenario: doubleclick');
    for (const id of SCENARIO_IDS) expect(run.stderr).toContain(id);
    expect(readdirSync(root)).toEqual([]);
  });

  it('refuses an argument it does not know', async () => {
    const root = tempRoot('bad-arg');
    const run = await runCommand('main.js', ['--outt', root]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('usage: npm run scenarios');
    expect(existsSync(`${root}/RESULTS.md`)).toBe(false);
  });
});
