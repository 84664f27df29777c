import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { countEffects } from '../src/effects/count';
import { readJsonPath } from '../src/effects/json-path';

describe('readJsonPath', () => {
  const doc = { data: { items: [{ n: 3 }], count: 2 } };
  it.each([
    ['$', doc],
    ['$.data.count', 2],
    ['data.count', 2],
    ['$.data.items[0].n', 3],
    ['$.data.missing.n', undefined],
  ])('reads %s', (path, value) => expect(readJsonPath(doc, path)).toEqual(value));
});

describe('countEffects', () => {
  let server: Server;
  let base: string;
  const asked: string[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      asked.push(req.url ?? '');
      const status = req.url?.includes('broken') ? 500 : 200;
      res.writeHead(status, { 'content-type': 'application/json' });
      if (req.url?.includes('silent')) return; // never answers
      res.end(JSON.stringify({ charges: { count: req.url?.includes('two') ? 2 : -1 } }));
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => {
    server.closeAllConnections();
    return new Promise((resolve) => server.close(resolve));
  });

  const http = (url: string) => ({ http: { url: `${base}${url}`, path: '$.charges.count', headers: {} } });

  it('reads an HTTP GET with the intent id filled in', async () => {
    await expect(countEffects(http('/charges?order={{intentId}}'), 'two')).resolves.toBe(2);
    expect(asked).toContain('/charges?order=two');
  });

  it('refuses a value that is not a count, and a non-200 answer', async () => {
    await expect(countEffects(http('/x?{{intentId}}'), 'one')).rejects.toThrow(
      'HTTP effect count: $.charges.count is -1 in the answer, not a count',
    );
    await expect(countEffects(http('/broken'), 'one')).rejects.toThrow('answered 500');
  });

  it('names the path and shows the start of the answer when the path finds no count', async () => {
    const wrong = { http: { url: `${base}/two`, path: '$.count', headers: {} } };
    await expect(countEffects(wrong, 'one')).rejects.toThrow(
      'HTTP effect count: $.count is undefined in the answer, not a count; the answer began: {"charges":{"count":2}}',
    );
  });

  it('gives up on a count that never answers, over HTTP and PostgreSQL', async () => {
    await expect(countEffects(http('/silent'), 'one', 300)).rejects.toThrow('HTTP effect count did not answer within 300ms');
    // A server that accepts the connection and never says a word, as a stuck database does.
    const mute = createNetServer(() => undefined);
    mute.listen(0, '127.0.0.1');
    await once(mute, 'listening');
    try {
      const url = `postgres://app@127.0.0.1:${(mute.address() as AddressInfo).port}/app`;
      await expect(countEffects({ postgres: { url, query: 'select 1' } }, 'one', 300)).rejects.toThrow(
        'PostgreSQL effect count did not answer within 300ms',
      );
    } finally {
      mute.close();
    }
  });

  it('runs a command and reads the number it prints', async () => {
    const command = [process.execPath, '-e', 'console.log(process.argv[1].length)', '{{intentId}}'];
    await expect(countEffects({ command }, 'abc')).resolves.toBe(3);
    await expect(countEffects({ command: [process.execPath, '-e', 'console.log("many")'] }, 'x')).rejects.toThrow(
      'command output is not a count: "many"',
    );
  });

  it('runs a PostgreSQL query with the intent id as $1', async () => {
    const url = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
    // A query over literal rows needs no table, so the test leaves nothing behind.
    const query = "select count(*) from (values ($1::text), ($1::text), ('other')) as v(id) where id = $1";
    await expect(countEffects({ postgres: { url, query } }, 'vfy-1')).resolves.toBe(2);
  });
});
