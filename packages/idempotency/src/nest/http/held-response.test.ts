import { createServer, request as httpRequest, ServerResponse, type IncomingHttpHeaders, type Server } from 'node:http';
import { connect as connectHttp2, createServer as createHttp2Server, type Http2ServerResponse } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { holdResponse, replaceResponse, type Written } from './held-response';
import type { HttpAnswer } from './http-answer';

/** A plain Node server whose handler gets each response already held (or replaced). */
async function serve(handler: (res: ServerResponse, method: string) => void): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => handler(res, req.method ?? 'GET'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

/** One request; the raw header lines too, to see repeated headers. */
function get(url: string, method = 'GET'): Promise<{ status: number; headers: IncomingHttpHeaders; rawHeaders: string[]; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, rawHeaders: res.rawHeaders, body: Buffer.concat(chunks) }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

describe('holdResponse', () => {
  let server: Server | undefined;
  afterEach(async () => {
    await new Promise((resolve) => server?.close(resolve));
    server = undefined;
  });

  it('sends nothing until onWritten has decided, then what the app wrote, and reports it whole', async () => {
    const written: Written[] = [];
    let decide!: () => void;
    const decided = new Promise<void>((resolve) => (decide = resolve));
    const app = await serve((res) => {
      holdResponse(res, { maxBytes: 1024, onWritten: async (w) => (written.push(w), await decided, undefined) });
      res.setHeader('content-type', 'text/plain');
      res.writeHead(201, { 'x-app': 'a' });
      res.write('hello ');
      res.end('world');
    });
    server = app.server;
    let answered = false;
    const response = get(app.url).then((r) => ((answered = true), r));
    while (written.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(answered).toBe(false);
    decide();

    const { status, headers, body } = await response;
    expect([status, headers['x-app'], headers['content-length'], body.toString()]).toEqual([201, 'a', '11', 'hello world']);
    expect(written[0]).toMatchObject({ whole: true, answer: { status: 201, headers: { 'content-type': 'text/plain', 'x-app': 'a' } } });
    expect((written[0] as { answer: HttpAnswer }).answer.body.toString()).toBe('hello world');
  });

  it('calls a write callback once the chunk is held, so a writer that waits for it goes on', async () => {
    const app = await serve((res) => {
      holdResponse(res, { maxBytes: 1024, onWritten: async () => undefined });
      void (async () => {
        for (const row of ['a,1\n', 'b,2\n', 'c,3\n']) await new Promise<void>((resolve) => res.write(row, () => resolve()));
        res.end();
      })();
    });
    server = app.server;
    expect((await get(app.url)).body.toString()).toBe('a,1\nb,2\nc,3\n');
  });

  it('keeps a header the app repeats in an array given to writeHead', async () => {
    const app = await serve((res) => {
      holdResponse(res, { maxBytes: 1024, onWritten: async () => undefined });
      res.writeHead(200, ['set-cookie', 'a=1', 'set-cookie', 'b=2', 'x-one', '1']);
      res.end();
    });
    server = app.server;
    const { headers } = await get(app.url);
    expect(headers['set-cookie']).toEqual(['a=1', 'b=2']);
    expect(headers['x-one']).toBe('1');
  });

  it('sends no Content-Length with a 204, and keeps a HEAD answer’s own', async () => {
    const app = await serve((res, method) => {
      holdResponse(res, { maxBytes: 1024, onWritten: async () => undefined });
      if (method === 'HEAD') {
        res.writeHead(200, { 'content-length': '42' });
        res.end();
      } else {
        res.writeHead(204);
        res.end();
      }
    });
    server = app.server;
    expect((await get(app.url)).headers['content-length']).toBeUndefined();
    expect((await get(app.url, 'HEAD')).headers['content-length']).toBe('42');
  });

  it('shows the headers as sent once the app wrote, as Node would', async () => {
    const seen: boolean[] = [];
    const app = await serve((res) => {
      holdResponse(res, { maxBytes: 1024, onWritten: async () => undefined });
      seen.push(res.headersSent);
      res.write('partial');
      seen.push(res.headersSent);
      res.end();
    });
    server = app.server;
    await get(app.url);
    expect(seen).toEqual([false, true]);
  });

  it('reads as ended once the app called end(), while its answer is still held, as Node would', async () => {
    const seen: Array<[string, boolean, boolean]> = [];
    let decide!: () => void;
    const decided = new Promise<void>((resolve) => (decide = resolve));
    const app = await serve((res) => {
      holdResponse(res, {
        maxBytes: 1024,
        onWritten: async () => {
          seen.push(['deciding', res.writableEnded, res.writableFinished]);
          await decided;
          return undefined;
        },
      });
      seen.push(['before end', res.writableEnded, res.writableFinished]);
      res.end('done');
      seen.push(['after end', res.writableEnded, res.writableFinished]);
      res.on('finish', () => seen.push(['finished', res.writableEnded, res.writableFinished]));
      decide();
    });
    server = app.server;
    expect((await get(app.url)).body.toString()).toBe('done');
    expect(seen).toEqual([
      ['before end', false, false],
      ['deciding', true, false],
      ['after end', true, false],
      ['finished', true, true],
    ]);
  });

  it('past maxBytes: decides on the head, then streams the whole body through', async () => {
    const written: Written[] = [];
    const app = await serve((res) => {
      holdResponse(res, { maxBytes: 10, onWritten: async (w) => (written.push(w), undefined) });
      res.writeHead(200, { 'content-type': 'text/plain' });
      for (let i = 0; i < 10; i++) res.write('0123456789');
      res.end('!');
    });
    server = app.server;
    const { body } = await get(app.url);
    expect(body.toString()).toBe(`${'0123456789'.repeat(10)}!`);
    expect(written).toEqual([{ whole: false, status: 200, headers: { 'content-type': 'text/plain' } }]);
  });

  it('holds a response held already once: the later holder decides, or its replacement is sent (a handler run again within its request)', async () => {
    const deciders: string[] = [];
    const app = await serve((res) => {
      holdResponse(res, { maxBytes: 1024, onWritten: async () => (deciders.push('first'), undefined) });
      if (res.req.url === '/again') holdResponse(res, { maxBytes: 1024, onWritten: async () => (deciders.push('second'), undefined) });
      else replaceResponse(res, { status: 201, headers: { 'content-type': 'text/plain' }, body: 'stored' });
      res.statusCode = 200;
      res.end('rendered');
    });
    server = app.server;
    const again = await get(`${app.url}/again`);
    const replaced = await get(`${app.url}/replaced`);

    expect([again.status, again.body.toString()]).toEqual([200, 'rendered']);
    expect([replaced.status, replaced.body.toString()]).toEqual([201, 'stored']);
    expect(deciders).toEqual(['second']);
  });

  it('replaceResponse: sends the answer instead, dropping the rendered representation and keeping the request’s own headers', async () => {
    const app = await serve((res) => {
      replaceResponse(res, { status: 202, headers: { 'content-type': 'application/pdf', location: '/x' }, body: Buffer.from([1, 2, 3]) });
      res.setHeader('access-control-allow-origin', '*');
      res.setHeader('content-security-policy', "default-src 'self'");
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '4', etag: 'W/"x"' });
      res.end('null');
    });
    server = app.server;
    const { status, headers, body } = await get(app.url);
    expect(status).toBe(202);
    expect(headers).toMatchObject({
      'content-type': 'application/pdf',
      location: '/x',
      'content-length': '3',
      'access-control-allow-origin': '*',
      'content-security-policy': "default-src 'self'",
    });
    expect(headers.etag).toBeUndefined();
    expect([...body]).toEqual([1, 2, 3]);
  });

  for (const [shape, prepare] of [
    ['Node', (res: ServerResponse) => res],
    ['Express', (res: ServerResponse) => Object.setPrototypeOf(res, Object.create(ServerResponse.prototype)) as ServerResponse],
  ] as const) {
    it(`writes the decided answer beneath a wrapper installed while it was held, which saw the app's own end once (${shape})`, async () => {
      const wrapped: string[] = [];
      const app = await serve((raw) => {
        const res = prepare(raw);
        holdResponse(res, { maxBytes: 1024, onWritten: async () => ({ status: 200, headers: {}, body: 'decided' }) });
        // An inner interceptor's wrapper, guarded as compression's end is: a second call would be swallowed.
        const inner = res.end;
        let ended = false;
        res.end = function (this: ServerResponse, chunk?: unknown) {
          wrapped.push(String(chunk));
          if (ended) return this;
          ended = true;
          return inner.call(this, String(chunk), 'utf8');
        } as ServerResponse['end'];
        res.end('rendered');
      });
      server = app.server;
      const { body } = await get(app.url);
      expect(body.toString()).toBe('decided');
      expect(wrapped).toEqual(['rendered']);
    });
  }

  it('answers headersSent and writableEnded on an HTTP/2 response after its answer left, as unheld', async () => {
    const seen: Array<[boolean, boolean]> = [];
    const h2 = createHttp2Server((_req, res: Http2ServerResponse) => {
      holdResponse(res as unknown as ServerResponse, { maxBytes: 1024, onWritten: async () => undefined });
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('ok');
      res.on('finish', () => seen.push([res.headersSent, res.writableEnded]));
    });
    await new Promise<void>((resolve) => h2.listen(0, '127.0.0.1', resolve));
    server = h2 as unknown as Server; // closed after the test, as every other one
    const client = connectHttp2(`http://127.0.0.1:${(h2.address() as AddressInfo).port}`);
    try {
      const body = await new Promise<string>((resolve, reject) => {
        const stream = client.request({ ':path': '/' });
        let text = '';
        stream.on('data', (chunk: Buffer) => (text += chunk.toString()));
        stream.on('end', () => resolve(text));
        stream.on('error', reject);
        stream.end();
      });
      while (seen.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
      expect([body, seen]).toEqual(['ok', [[true, true]]]);
    } finally {
      client.close();
    }
  });

  describe('on a response whose prototype its framework swapped (Express)', () => {
    /** What Express does to every response: its prototype becomes the app's, which inherits Node's. */
    const appResponse = Object.create(ServerResponse.prototype) as ServerResponse;
    const asExpress = (res: ServerResponse) => Object.setPrototypeOf(res, appResponse) as ServerResponse;

    it('holds it with one property of its own, and leaves it answering as Node would once the answer left', async () => {
      const added: Array<string | symbol> = [];
      const after: Array<[boolean, boolean]> = [];
      let decide!: () => void;
      const decided = new Promise<void>((resolve) => (decide = resolve));
      const app = await serve((raw) => {
        const res = asExpress(raw);
        const before = new Set(Reflect.ownKeys(res));
        holdResponse(res, { maxBytes: 1024, onWritten: async () => (await decided, undefined) });
        added.push(...Reflect.ownKeys(res).filter((key) => !before.has(key)));
        res.writeHead(201, { 'content-type': 'text/plain' });
        res.end('held');
        after.push([res.headersSent, res.writableEnded]);
        res.on('finish', () => after.push([res.headersSent, res.writableEnded]));
      });
      server = app.server;
      let answered = false;
      const response = get(app.url).then((r) => ((answered = true), r));
      while (after.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(answered).toBe(false);
      decide();

      const { status, body } = await response;
      expect([status, body.toString()]).toEqual([201, 'held']);
      expect(added).toHaveLength(1);
      expect(after).toEqual([
        [true, true],
        [true, true],
      ]);
    });

    it('holds beneath the methods a middleware wrapped as its own (compression): they get the answer as it is sent', async () => {
      const seen: string[] = [];
      const app = await serve((raw) => {
        const res = asExpress(raw);
        // As compression() does: the response's own end, around the one it found.
        const found = res.end.bind(res) as (chunk?: unknown) => ServerResponse;
        res.end = ((chunk?: unknown) => (seen.push(String(chunk)), found(chunk))) as ServerResponse['end'];
        holdResponse(res, { maxBytes: 1024, onWritten: async () => ({ status: 200, headers: {}, body: 'decided' }) });
        res.end('rendered');
      });
      server = app.server;
      const { body } = await get(app.url);
      expect(body.toString()).toBe('decided');
      expect(seen).toEqual(['decided']);
    });

    it('holds it again after an answer left, without stacking a second twin', async () => {
      const sameTwin: boolean[] = [];
      const app = await serve((raw) => {
        const res = asExpress(raw);
        replaceResponse(res, { status: 200, headers: {}, body: 'first' });
        res.end('rendered');
        const twin = Object.getPrototypeOf(res) as object;
        holdResponse(res, { maxBytes: 1024, onWritten: async () => undefined });
        sameTwin.push(Object.getPrototypeOf(res) === twin, Object.getPrototypeOf(twin) === appResponse);
      });
      server = app.server;
      const { body } = await get(app.url);
      expect(body.toString()).toBe('first');
      expect(sameTwin).toEqual([true, true]);
    });
  });
});
