import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig, parseConfig } from '../src/config/load';
import { ServiceProcess } from '../src/run/service';
import { freePort } from './support/free-port';

const valid = `entry:
  url: http://127.0.0.1:8080/checkout
  body:
    orderId: "{{intentId}}"
    amount: 1200
hops:
  - name: orders
    listen: 127.0.0.1:9101
    upstream: http://127.0.0.1:8101
  - name: payments
    listen: "9102"
    upstream: http://127.0.0.1:8102
effect:
  http:
    url: http://127.0.0.1:8102/charges?order={{intentId}}
    path: $.count
`;

function errorOf(text: string): ConfigError {
  try {
    parseConfig(text, 'chain.yaml');
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('config', () => {
  it('fills every default of a minimal file', () => {
    const config = parseConfig(valid, 'chain.yaml');
    expect(config.entry).toMatchObject({ method: 'POST', timeoutMs: 5000, retries: 3, key: { send: true, header: 'Idempotency-Key' } });
    expect(config.settle).toEqual({ quietMs: 1000, timeoutMs: 60000 });
    // Absent means the default catalog: every family the config can run.
    expect(config.scenarios).toBeUndefined();
    expect(config.effect.http?.path).toBe('$.count');
  });

  it('names the field and its line when a value is wrong', () => {
    const error = errorOf(valid.replace('upstream: http://127.0.0.1:8102', 'upstream: not-a-url'));
    expect(error.message).toBe('chain.yaml:12: hops.1.upstream: expected an http(s) URL');
    expect(error).toMatchObject({ line: 12, field: 'hops.1.upstream' });
  });

  it('takes a queue hop, and refuses a broker it cannot front or a queue scenario it cannot run', () => {
    const queue = (broker: string) =>
      `${valid}queue:\n  name: consumer\n  broker: ${broker}\n  listen: 127.0.0.1:9672\n  queue: payments.charges\n`;
    expect(parseConfig(queue('amqp://guest:guest@127.0.0.1:5672'), 'chain.yaml').queue).toEqual({
      name: 'consumer',
      broker: 'amqp://guest:guest@127.0.0.1:5672',
      listen: '127.0.0.1:9672',
      queue: 'payments.charges',
      keyHeader: 'idempotency-key',
    });
    expect(errorOf(queue('amqps://127.0.0.1:5671')).message).toBe(
      'chain.yaml:19: queue.broker: expected an amqp:// or nats:// URL (the proxy reads plain AMQP 0-9-1 or NATS; no TLS)',
    );
    expect(errorOf(`${queue('amqp://127.0.0.1')}scenarios: [kill-before-ack]\n`).message).toBe(
      'chain.yaml:22: scenarios.0: "kill-before-ack" cannot run: the queue hop has no service for the verifier to start, kill and start again (set queue.service)',
    );
    expect(errorOf(`${valid}scenarios: [lost-ack]\n`).message).toMatch(/scenarios\.0: "lost-ack" cannot run: there is no queue hop/);
  });

  it('takes a NATS JetStream queue hop by its stream and consumer, and refuses the fields of the other broker', () => {
    const nats = (fields: string) =>
      `${valid}queue:\n  name: consumer\n  broker: nats://127.0.0.1:4222\n  listen: 127.0.0.1:9422\n${fields}`;
    expect(parseConfig(nats('  stream: CHARGES\n  consumer: payments\n'), 'chain.yaml').queue).toEqual({
      name: 'consumer',
      broker: 'nats://127.0.0.1:4222',
      listen: '127.0.0.1:9422',
      stream: 'CHARGES',
      consumer: 'payments',
      keyHeader: 'idempotency-key',
    });
    expect(errorOf(nats('  stream: CHARGES\n')).message).toBe('chain.yaml:18: queue.consumer: required with a nats:// broker (JetStream)');
    expect(errorOf(nats('  stream: CHARGES\n  consumer: payments\n  queue: charges\n')).message).toBe(
      'chain.yaml:23: queue.queue: not read with a nats:// broker (JetStream)',
    );
    expect(errorOf(nats('  stream: charges.all\n  consumer: payments\n')).message).toMatch(
      /^chain\.yaml:21: queue\.stream: expected a JetStream name: no whitespace, "\.", "\*", ">"/,
    );
    // The verifier's copies leave Nats-Msg-Id out (JetStream would drop them): a key there would not travel with them.
    expect(errorOf(nats('  stream: CHARGES\n  consumer: payments\n  keyHeader: Nats-Msg-Id\n')).message).toMatch(
      /^chain\.yaml:\d+: queue\.keyHeader: Nats-Msg-Id cannot carry the key: the verifier's copies of a message leave it out/,
    );
    const amqp = `${valid}queue:\n  name: consumer\n  broker: amqp://127.0.0.1\n  listen: "9672"\n  stream: CHARGES\n  queue: charges\n`;
    expect(errorOf(amqp).message).toBe('chain.yaml:21: queue.stream: not read with an amqp:// broker (RabbitMQ)');
  });

  it('refuses an upstream with a path, which the proxy would drop', () => {
    const error = errorOf(valid.replace('upstream: http://127.0.0.1:8101', 'upstream: http://127.0.0.1:8101/v1'));
    expect(error).toMatchObject({ line: 9, field: 'hops.0.upstream' });
    expect(error.message).toContain('expected an origin');
  });

  it('names an unknown field at its own line', () => {
    const error = errorOf(valid.replace('  amount: 1200\n', '  amount: 1200\n  timeout: 3\n'));
    expect(error).toMatchObject({ line: 6, field: 'entry.timeout' });
    expect(error.message).toContain('unknown field "timeout"');
  });

  it('points a missing field at its parent', () => {
    const error = errorOf(valid.replace('    listen: 127.0.0.1:9101\n', ''));
    expect(error).toMatchObject({ line: 7, field: 'hops.0.listen' });
  });

  it('refuses a time longer than a timer can wait, which would fire at once and end the run', () => {
    const error = errorOf(`${valid}deadlineMs: 2592000000\n`);
    expect(error).toMatchObject({ field: 'deadlineMs' });
    expect(error.message).toContain('expected at most 2147483647 ms');
    expect(parseConfig(`${valid}deadlineMs: 2147483647\n`, 'chain.yaml').deadlineMs).toBe(2_147_483_647);
  });

  it('refuses an effect with two ways of counting', () => {
    const error = errorOf(`${valid}  command: [echo, "1"]\n`);
    expect(error.field).toBe('effect');
    expect(error.message).toContain('exactly one of "http", "command" or "postgres"');
  });

  it('takes the statuses a reused key may be refused with, never one meaning "later" or "not you"', () => {
    expect(parseConfig(valid, 'chain.yaml').keyReuse).toEqual({ refusedWith: [422], ignoredFields: [], ignoredQuery: [] });
    expect(parseConfig(`${valid}keyReuse:\n  refusedWith: [400, 422]\n`, 'chain.yaml').keyReuse.refusedWith).toEqual([400, 422]);
    const error = errorOf(`${valid}keyReuse:\n  refusedWith: [422, 409]\n`);
    expect(error).toMatchObject({ line: 18, field: 'keyReuse.refusedWith.1' });
    expect(error.message).toContain('not 401, 403, 408, 409, 425 or 429');
    expect(errorOf(`${valid}keyReuse:\n  refusedWith: [500]\n`).message).toContain('expected a 4xx');
  });

  it('takes two callers with headers of their own, and names a wrong one by its line', () => {
    const callers = (list: string) => valid.replace('    amount: 1200\n', `    amount: 1200\n  callers:\n${list}`);
    const two = '    - headers: { X-Tenant: acme }\n    - headers: { X-Tenant: globex }\n';
    expect(parseConfig(callers(two), 'chain.yaml').entry.callers).toEqual([
      { headers: { 'X-Tenant': 'acme' } },
      { headers: { 'X-Tenant': 'globex' } },
    ]);
    expect(parseConfig(valid, 'chain.yaml').entry.callers).toBeUndefined();
    expect(errorOf(callers('    - headers: { X-Tenant: acme }\n'))).toMatchObject({ line: 7, field: 'entry.callers' });
    expect(errorOf(callers('    - headers: { X-Tenant: acme }\n    - headers: { X-Tenant: 7 }\n'))).toMatchObject({
      line: 8,
      field: 'entry.callers.1.headers.X-Tenant',
    });
    expect(errorOf(callers('    - headers: {}\n    - { headers: {}, tenant: acme }\n')).message).toBe(
      'chain.yaml:8: entry.callers.1.tenant: unknown field "tenant"',
    );
  });

  it('refuses a hop that forwards to its own proxy, however the address is spelled', () => {
    for (const upstream of ['http://127.0.0.1:9101', 'http://localhost:9101']) {
      const error = errorOf(valid.replace('upstream: http://127.0.0.1:8101', `upstream: ${upstream}`));
      expect(error).toMatchObject({ line: 9, field: 'hops.0.upstream' });
      expect(error.message).toContain('forwards to its own proxy (127.0.0.1:9101)');
    }
    const port = errorOf(valid.replace('upstream: http://127.0.0.1:8102', 'upstream: http://127.0.0.1:9102'));
    expect(port).toMatchObject({ line: 12, field: 'hops.1.upstream' });
  });

  it("refuses hops that forward in a cycle, and takes a hop forwarding to the next one's proxy", () => {
    const ring = valid
      .replace('upstream: http://127.0.0.1:8101', 'upstream: http://127.0.0.1:9102')
      .replace('upstream: http://127.0.0.1:8102', 'upstream: http://127.0.0.1:9101');
    expect(errorOf(ring).message).toContain('the hops forward in a cycle (orders -> payments -> orders)');
    const chained = valid.replace('upstream: http://127.0.0.1:8101', 'upstream: http://127.0.0.1:9102');
    expect(parseConfig(chained, 'chain.yaml').hops[0]?.upstream).toBe('http://127.0.0.1:9102');
  });

  it('refuses an unknown scenario by its index', () => {
    const error = errorOf(`${valid}scenarios: [write-up, typo]\n`);
    expect(error).toMatchObject({ line: 17, field: 'scenarios.1' });
  });

  it('reports a syntax error with its line', () => {
    const error = errorOf('entry:\n  url: [unclosed\n');
    expect(error.line).toBeGreaterThanOrEqual(2);
    expect(error.field).toBe('');
  });

  it('replaces ${VAR} and ${VAR:-default} from the environment, and names the field of an unset one', () => {
    vi.stubEnv('VFY_TEST_PORT', '8111');
    vi.stubEnv('VFY_TEST_EMPTY', '');
    try {
      const text = valid
        .replace('upstream: http://127.0.0.1:8101', 'upstream: http://127.0.0.1:${VFY_TEST_PORT}')
        .replace('upstream: http://127.0.0.1:8102', 'upstream: "http://${VFY_TEST_HOST:-127.0.0.1}:${VFY_TEST_EMPTY:-8112}"');
      expect(parseConfig(text, 'chain.yaml').hops.map((h) => h.upstream)).toEqual(['http://127.0.0.1:8111', 'http://127.0.0.1:8112']);
      const error = errorOf(valid.replace('path: $.count', 'path: ${VFY_TEST_UNSET}'));
      expect(error).toMatchObject({ line: 16, field: 'effect.http.path' });
      expect(error.message).toContain('${VFY_TEST_UNSET} is not set in the environment');
      // A query's $1 is no placeholder.
      expect(parseConfig(valid.replace('{{intentId}}\n    path', '{{intentId}}&a=$1\n    path'), 'chain.yaml').effect.http?.url).toContain(
        '&a=$1',
      );
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it("resolves working directories against the config file's folder, whatever the current directory", () => {
    const service = (cwd: string) =>
      valid.replace(
        'upstream: http://127.0.0.1:8102\n',
        `upstream: http://127.0.0.1:8102\n    service: { start: [./payments], health: http://127.0.0.1:8102/health${cwd} }\n`,
      );
    expect(parseConfig(service(''), '/srv/chain/chain.yaml').hops[1]?.service?.cwd).toBe('/srv/chain');
    expect(parseConfig(service(', cwd: ./services'), '/srv/chain/chain.yaml').hops[1]?.service?.cwd).toBe('/srv/chain/services');
    expect(parseConfig(service(', cwd: /opt/pay'), '/srv/chain/chain.yaml').hops[1]?.service?.cwd).toBe('/opt/pay');
    const command = valid.replace(/effect:[\s\S]*$/, 'effect:\n  command: [./count.sh]\n  cwd: scripts\n');
    expect(parseConfig(command, '/srv/chain/chain.yaml').effect.cwd).toBe('/srv/chain/scripts');
  });

  it('starts a service whose script sits beside the config, run from another directory', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'verify-relative-'));
    const port = await freePort();
    writeFileSync(join(dir, 'server.js'), `require('http').createServer((q, s) => s.end('ok')).listen(${port}, '127.0.0.1');\n`);
    const file = join(dir, 'chain.yaml');
    writeFileSync(
      file,
      valid.replace(
        'upstream: http://127.0.0.1:8102\n',
        `upstream: http://127.0.0.1:${port}\n    service: { start: [${JSON.stringify(process.execPath)}, server.js], health: "http://127.0.0.1:${port}/" }\n`,
      ),
    );
    const service = new ServiceProcess('payments', loadConfig(file).hops[1]!.service!);
    try {
      expect(process.cwd()).not.toBe(dir);
      await service.start();
      expect((await fetch(`http://127.0.0.1:${port}/`)).status).toBe(200);
    } finally {
      await service.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reads JSON with line numbers too', () => {
    const dir = mkdtempSync(join(tmpdir(), 'verify-config-'));
    const file = join(dir, 'chain.json');
    const json = JSON.stringify(parseConfig(valid, 'x'), null, 2).replace('"retries": 3', '"retries": -1');
    writeFileSync(file, json);
    expect(() => loadConfig(file)).toThrow(new RegExp(`^${file}:\\d+: entry.retries: `));
    const line = json.split('\n').findIndex((l) => l.includes('"retries"')) + 1;
    expect(() => loadConfig(file)).toThrow(`${file}:${line}: entry.retries`);
  });
});
