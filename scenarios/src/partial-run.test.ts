import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { resultsUnder, runCommand, tempRoot } from './cli.test-support';
import { chartLink } from './output-paths';
import { parseSections } from './results-document';

// Three short runs of real services.
vi.setConfig({ testTimeout: 300_000, hookTimeout: 300_000 });

describe('a run of a selection', () => {
  const root = tempRoot('partial');
  const read = (file: string) => readFileSync(join(root, file), 'utf8');
  const run = async (scenarios: string) => {
    const result = await runCommand('main.js', ['--out', root], { SCENARIOS: scenarios });
    if (result.code !== 0) throw new Error(`SCENARIOS=${scenarios} ended with ${result.code}: ${result.stderr}`);
    return result;
  };

  it('writes its own sections, then a later selection adds and replaces its own and keeps every other byte for byte', async () => {
    const first = await run('key-reuse');
    expect(first.stdout).toContain('partial run: updated key-reuse; every other section kept');
    expect(first.stdout).toMatch(/key-reuse\s+ours: propagated key\s+1\s+1/);
    const keyReuse = parseSections(read('RESULTS.md')).get('key-reuse');
    const keyReuseJson = resultsUnder(root).failures.find((f) => f.id === 'key-reuse');
    const keyReuseChart = read(chartLink('key-reuse'));

    await run('retention');
    const sections = parseSections(read('RESULTS.md'));
    expect([...sections.keys()]).toEqual(['key-reuse', 'retention']);
    expect(sections.get('key-reuse')).toBe(keyReuse);
    expect(resultsUnder(root).failures.find((f) => f.id === 'key-reuse')).toEqual(keyReuseJson);
    expect(read(chartLink('key-reuse'))).toBe(keyReuseChart);
    const retention = sections.get('retention');

    await run('key-reuse');
    const again = parseSections(read('RESULTS.md'));
    expect(again.get('retention')).toBe(retention);
    expect(again.get('key-reuse')).not.toBe(keyReuse);
    expect(resultsUnder(root).failures.map((f) => f.id)).toEqual(['key-reuse', 'retention']);
  });
});
