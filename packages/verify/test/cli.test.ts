import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { main } from '../src/cli';
import { parseConfig } from '../src/config/load';
import { ALL_SCENARIOS } from '../src/config/schema';
import { catalog, select, skipped } from '../src/scenarios/catalog';
import { builtCli } from './support/cli';
import { freePort } from './support/free-port';
import { captureOutput } from './support/output';
import { startUpstream, type Upstream } from './support/upstream';

const yaml = `entry:
  url: http://127.0.0.1:1/checkout
hops:
  - { name: orders, listen: "0", upstream: "http://127.0.0.1:1" }
  - { name: payments, listen: "0", upstream: "http://127.0.0.1:2" }
effect:
  command: [echo, "1"]
`;

describe('scenario selection', () => {
  const all = catalog(parseConfig(yaml, 'chain.yaml'));

  it('names one instance per hop where a scenario is about a hop', () => {
    expect(all.map((s) => s.name)).toEqual([
      'write-up',
      'lost-reply@orders',
      'lost-reply@payments',
      'later-press',
      'late-press',
      'double-click',
      'duplicate@orders',
      'duplicate@payments',
      'retry-while-running@orders',
      'retry-while-running@payments',
      'no-key',
      'reset@orders',
      'reset@payments',
      'unavailable@orders',
      'unavailable@payments',
    ]);
  });

  it('selects by family or by instance, and refuses an unknown name', () => {
    expect(select(all, ['lost-reply', 'reset@payments']).map((s) => s.name)).toEqual([
      'lost-reply@orders',
      'lost-reply@payments',
      'reset@payments',
    ]);
    expect(() => select(all, ['lost-reply@nowhere'])).toThrow('unknown or disabled scenario "lost-reply@nowhere"');
  });

  it('can kill the deepest service only when the verifier runs it', () => {
    const withService = yaml.replace(
      'upstream: "http://127.0.0.1:2" }',
      'upstream: "http://127.0.0.1:2", service: { start: [node, payments.js], health: "http://127.0.0.1:2/health" } }',
    );
    expect(catalog(parseConfig(withService, 'chain.yaml')).map((s) => s.name)).toContain('kill');
    expect(all.map((s) => s.name)).not.toContain('kill');
  });

  it('presses as two callers with one key only when the config describes both', () => {
    const withCallers = yaml.replace('checkout\n', 'checkout\n  callers: [{ headers: { X-Tenant: a } }, { headers: { X-Tenant: b } }]\n');
    expect(
      catalog(parseConfig(withCallers, 'chain.yaml'))
        .map((s) => s.name)
        .at(-1),
    ).toBe('two-callers');
    expect(all.map((s) => s.name)).not.toContain('two-callers');
  });

  it('reuses a key only when the entry has a field to change, one at a time', () => {
    expect(skipped(parseConfig(yaml, 'chain.yaml')).find((s) => s.name === 'key-reuse')?.reason).toMatch(
      /^the entry has no body field or query parameter left to change/,
    );
    const withBody = parseConfig(yaml.replace('checkout\n', 'checkout\n  body: { orderId: "{{intentId}}" }\n'), 'chain.yaml');
    expect(catalog(withBody).map((s) => s.name)).toContain('key-reuse');
  });

  it('runs only what the config enables', () => {
    const some = catalog(parseConfig(`${yaml}scenarios: [no-key]\n`, 'chain.yaml'));
    expect(some.map((s) => s.name)).toEqual(['no-key']);
  });
});

describe('command line', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'verify-cli-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('exits 2 with the file, line and field of a bad config', async () => {
    const file = join(dir, 'chain.yaml');
    writeFileSync(file, yaml.replace('url: http://127.0.0.1:1/checkout', 'url: 42'));
    const err = captureOutput();
    await expect(main(['run', file], captureOutput(), err)).resolves.toBe(2);
    expect(err.text()).toBe(`${file}:2: entry.url: expected an http(s) URL\n`);
  });

  it('lists the commands, the options and every scenario on --help', async () => {
    const out = captureOutput();
    await expect(main(['--help'], out, captureOutput())).resolves.toBe(0);
    for (const text of ['run <chain.yaml>', '--scenario <name>', '--report-dir <dir>', 'Exit codes']) expect(out.text()).toContain(text);
    for (const family of ALL_SCENARIOS) expect(out.text()).toMatch(new RegExp(`^  ${family} +\\S`, 'm'));
  });

  it('exits 2 with the usage on a wrong command line', async () => {
    const err = captureOutput();
    await expect(main(['verify'], captureOutput(), err)).resolves.toBe(2);
    expect(err.text()).toContain('usage: idempotency-verify run <chain.yaml>');
  });
});

describe('a caller that sends no key', () => {
  it('keeps only the scenarios that need none', () => {
    const config = parseConfig(yaml.replace('checkout\n', 'checkout\n  key: { send: false }\n'), 'chain.yaml');
    expect(catalog(config).map((s) => s.family)).not.toContain('key-reuse');
    expect(catalog(config).map((s) => s.name)).toEqual([
      'write-up',
      'lost-reply@orders',
      'lost-reply@payments',
      'duplicate@orders',
      'duplicate@payments',
      // Only inside the chain: a caller without a key never retries, the services do.
      'retry-while-running@payments',
      'no-key',
      'reset@orders',
      'reset@payments',
      'unavailable@orders',
      'unavailable@payments',
    ]);
  });
});

describe('the command with its output piped, as in a CI log', () => {
  let dir: string;
  let upstream: Upstream;
  let cli: string;
  beforeAll(async () => {
    cli = builtCli();
    dir = mkdtempSync(join(tmpdir(), 'verify-pipe-'));
    upstream = await startUpstream();
  });
  afterAll(async () => {
    await upstream.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('prints a plain line as each scenario starts and ends, with no escape codes or redraws', async () => {
    const proxy = await freePort();
    const file = join(dir, 'chain.json');
    writeFileSync(
      file,
      JSON.stringify({
        entry: { url: `http://127.0.0.1:${proxy}/charges`, body: { orderId: '{{intentId}}' } },
        hops: [{ name: 'payments', listen: `127.0.0.1:${proxy}`, upstream: upstream.url }],
        effect: { command: [process.execPath, '-e', 'process.stdout.write("1")'] },
        settle: { quietMs: 200 },
        scenarios: ['later-press', 'no-key'],
      }),
    );
    const child = spawn(process.execPath, [cli, 'run', file, '--report-dir', join(dir, 'report')], { stdio: ['ignore', 'pipe', 'pipe'] });
    const [stdout, stderr, [code]] = await Promise.all([text(child.stdout), text(child.stderr), once(child, 'close')]);
    expect(stderr).toBe('');
    expect([0, 1]).toContain(code);
    expect(stdout).not.toContain('\x1b');
    expect(stdout).not.toContain('\r');
    const lines = stdout.split('\n');
    expect(lines.slice(0, 4)).toEqual([
      '[1/2] later-press started',
      expect.stringMatching(/^\[1\/2\] later-press (pass|FAIL) effects=\d+ attempts=\d+ time=\d+\.\ds$/),
      '[2/2] no-key started',
      expect.stringMatching(/^\[2\/2\] no-key (pass|FAIL) effects=\d+ attempts=\d+ time=\d+\.\ds$/),
    ]);
    expect(stdout).toMatch(/\n\d\/2 scenarios passed in \d+\.\ds\nreports in .*\/report\/\n$/);
  });
});

function text(stream: Readable): Promise<string> {
  return buffer(stream).then((b) => b.toString());
}
