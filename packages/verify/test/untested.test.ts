import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../src/cli';
import { parseConfig } from '../src/config/load';
import { runChain } from '../src/run/runner';
import { freePort } from './support/free-port';
import { captureOutput } from './support/output';
import { startUpstream, type Upstream } from './support/upstream';

/** A one-hop chain whose service charges on every POST it gets: twice for two attempts. */
const chain = (proxy: number, upstream: string, extra = '') => `entry:
  url: http://127.0.0.1:${proxy}/charges
  body: { orderId: "{{intentId}}" }
  timeoutMs: 1000
  retries: 1
hops:
  - name: payments
    listen: 127.0.0.1:${proxy}
    upstream: ${upstream}
effect:
  command: [node, -e, "console.log(2)"]
settle: { quietMs: 200, timeoutMs: 5000 }
${extra}`;

describe('a scenario the config names but cannot run', () => {
  it.each([
    ['scenarios: [kill]\n', 'scenarios.0', /"kill" cannot run: the deepest hop "payments" has no service .*hops\.0\.service/],
    ['scenarios: [two-callers]\n', 'scenarios.0', /"two-callers" cannot run: .*entry\.callers/],
    ['scenarios: [no-key, later-press, double-click, key-reuse]\n', 'scenarios.1', /"later-press" cannot run: .*entry\.key\.send is false/],
  ])('is a config error naming what is missing: %s', (scenarios, field, message) => {
    const text = chain(9, 'http://127.0.0.1:8', scenarios).replace('retries: 1', 'retries: 1\n  key: { send: false }');
    const named = scenarios.includes('later-press') ? text : text.replace('\n  key: { send: false }', '');
    const line = named.split('\n').findIndex((l) => l.startsWith('scenarios:')) + 1;
    expect(() => parseConfig(named, 'chain.yaml')).toThrow(expect.objectContaining({ field, line }));
    expect(() => parseConfig(named, 'chain.yaml')).toThrow(message);
  });

  it('exits 2 from the command line, even when the chain charges twice on every POST', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'verify-untested-'));
    try {
      const file = join(dir, 'chain.yaml');
      writeFileSync(file, chain(await freePort(), 'http://127.0.0.1:1', 'scenarios: [kill]\n'));
      const out = captureOutput();
      const err = captureOutput();
      await expect(main(['run', file, '--report-dir', join(dir, 'report')], out, err)).resolves.toBe(2);
      expect(err.text()).toContain(`${file}:13: scenarios.0: "kill" cannot run`);
      expect(out.text()).not.toContain('scenarios passed');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('is refused on the command line with the reason', async () => {
    const config = parseConfig(chain(9, 'http://127.0.0.1:8'), 'chain.yaml');
    await expect(runChain(config, { configFile: 'chain.yaml', scenarios: ['kill'] })).rejects.toThrow(
      /scenario "kill" cannot run: the deepest hop "payments" has no service/,
    );
  });

  it('leaves a run with nothing to run an error, never a pass', async () => {
    const config = parseConfig(chain(9, 'http://127.0.0.1:8'), 'chain.yaml');
    // Only a caller of the library can build such a config: the file would be refused.
    await expect(runChain({ ...config, scenarios: ['kill'] }, { configFile: 'chain.yaml' })).rejects.toThrow(/no scenario can run/);
  });
});

describe('scenarios of the default catalog that cannot run', () => {
  let dir: string;
  let upstream: Upstream;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'verify-catalog-'));
    upstream = await startUpstream();
  });
  afterAll(async () => {
    await upstream.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('are listed as skipped, with the reason, in the terminal, report.md and JUnit', async () => {
    const file = join(dir, 'chain.yaml');
    // Only the scenarios without a fault: the skipped ones are the point here.
    writeFileSync(file, chain(await freePort(), upstream.url).replace('retries: 1', 'retries: 1\n  key: { send: false }'));
    const out = captureOutput();
    const report = join(dir, 'report');
    const code = await main(['run', file, '--report-dir', report, '--scenario', 'no-key'], out, captureOutput());
    expect(code).toBe(1);
    // A selection on the command line names what it wants: nothing else is listed as skipped.
    expect(out.text()).not.toContain('skipped');

    const config = parseConfig(readFileSync(file, 'utf8'), file);
    const run = await runChain({ ...config, scenarios: ['no-key', 'later-press', 'kill', 'two-callers'] }, { configFile: file });
    expect(run.scenarios.map((s) => s.name)).toEqual(['no-key']);
    expect(run.skipped).toEqual([
      { name: 'later-press', family: 'later-press', reason: expect.stringContaining('entry.key.send is false') },
      { name: 'kill', family: 'kill', reason: expect.stringContaining('the deepest hop "payments" has no service') },
      { name: 'two-callers', family: 'two-callers', reason: expect.stringContaining('entry.key.send is false') },
    ]);
  });
});
