import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../src/cli';
import { parseConfig } from '../src/config/load';
import { catalog, select } from '../src/scenarios/catalog';
import { captureOutput } from './support/output';

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
      'double-click',
      'key-reuse',
      'no-key',
      'reset@orders',
      'reset@payments',
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
      'no-key',
      'reset@orders',
      'reset@payments',
    ]);
  });
});
