import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { Agent, request } from 'undici';
import { keyHash } from '../src/proxy/attempt';
import { AttemptLog } from '../src/proxy/attempt-log';
import { FaultProxy } from '../src/proxy/fault-proxy';
import type { Fault } from '../src/proxy/faults';
import { freePort } from './support/free-port';
import { startUpstream, type Upstream } from './support/upstream';

describe('FaultProxy over real HTTP', () => {
  let upstream: Upstream;
  let log: AttemptLog;
  let proxy: FaultProxy;
  let url: string;
  let agent: Agent;

  beforeEach(async () => {
    upstream = await startUpstream();
    log = new AttemptLog();
    log.context = { scenario: 's', intent: 'i1' };
    proxy = new FaultProxy({ name: 'payments', host: '127.0.0.1', port: 0, upstream: upstream.url, keyHeader: 'Idempotency-Key', log });
    url = `http://127.0.0.1:${await proxy.start()}/charges?x=1`;
    agent = new Agent();
  });

  afterEach(async () => {
    await agent.close();
    await proxy.stop();
    await upstream.close();
  });

  const plan = (faults: Fault[]) => proxy.setPlan(new Map([[1, faults]]));
  const post = (body = '{"a":1}', timeoutMs = 20_000) =>
    request(url, {
      dispatcher: agent,
      method: 'POST',
      headers: { 'idempotency-key': 'key-1', 'content-type': 'application/json' },
      body,
      signal: AbortSignal.timeout(timeoutMs),
    });
  const settled = () => log.whenQuiet(50, 20_000);

  it('forwards method, path, headers and body, and records the attempt with the key hashed', async () => {
    const answer = await post();
    expect(answer.statusCode).toBe(201);
    expect(answer.headers['x-upstream']).toBe('yes');
    expect(await answer.body.json()).toEqual({ n: 1, key: 'key-1' });
    expect(upstream.received).toEqual(['{"a":1}']);
    await settled();
    expect(log.of('s')).toEqual([
      expect.objectContaining({
        hop: 'payments',
        attempt: 1,
        intent: 'i1',
        method: 'POST',
        path: '/charges?x=1',
        keyHash: keyHash('key-1'),
        status: 201,
        outcome: 'answered',
        faults: [],
      }),
    ]);
    expect(keyHash('key-1')).toMatch(/^[0-9a-f]{8}$/);
  });

  it('loses the reply only after the upstream answered in full', async () => {
    plan([{ kind: 'lose-reply' }]);
    await expect(post()).rejects.toThrow();
    await settled();
    expect(upstream.received).toHaveLength(1);
    expect(log.of('s')[0]).toMatchObject({ status: 201, outcome: 'reply-lost', faults: ['lose-reply'] });
  });

  it('applies the plan from attempt 1 again after restartPlan, as for a new call, and numbers attempts on', async () => {
    plan([{ kind: 'lose-reply' }]);
    await expect(post()).rejects.toThrow();
    expect(await (await post()).body.json()).toEqual({ n: 2, key: 'key-1' });
    proxy.restartPlan();
    await expect(post()).rejects.toThrow();
    await settled();
    expect(log.of('s').map((a) => [a.attempt, a.outcome, a.faults])).toEqual([
      [1, 'reply-lost', ['lose-reply']],
      [2, 'answered', []],
      [3, 'reply-lost', ['lose-reply']],
    ]);
  });

  it('faults only the planned attempt: the retry goes through', async () => {
    plan([{ kind: 'lose-reply' }]);
    await expect(post()).rejects.toThrow();
    const retry = await post();
    expect(await retry.body.json()).toEqual({ n: 2, key: 'key-1' });
    await settled();
    expect(log.of('s').map((a) => [a.attempt, a.outcome])).toEqual([
      [1, 'reply-lost'],
      [2, 'answered'],
    ]);
  });

  it('resets mid-request: the upstream never sees it', async () => {
    plan([{ kind: 'reset' }]);
    await expect(post('x'.repeat(100_000))).rejects.toThrow();
    await settled();
    expect(upstream.received).toHaveLength(0);
    expect(log.of('s')[0]).toMatchObject({ status: null, outcome: 'reset' });
  });

  it('survives a caller that hangs up mid-body, and ends the attempt', async () => {
    const port = Number(new URL(url).port);
    const socket = connect(port, '127.0.0.1');
    await once(socket, 'connect');
    socket.write('POST /charges HTTP/1.1\r\nhost: x\r\ncontent-length: 100\r\n\r\n0123456789');
    await new Promise<void>((resolve) => {
      const off = log.onChange(() => (off(), resolve()));
    });
    socket.destroy();
    await settled();
    expect(log.of('s')).toEqual([expect.objectContaining({ outcome: 'caller-gone', status: null })]);
    expect(upstream.received).toHaveLength(0);
    expect((await post()).statusCode).toBe(201);
  });

  it('delivers duplicates side by side and answers the caller once', async () => {
    plan([{ kind: 'duplicate', copies: 2 }]);
    const answer = await post();
    expect(answer.statusCode).toBe(201);
    await answer.body.dump();
    await settled();
    expect(upstream.received).toHaveLength(3);
    const attempts = log.of('s');
    expect(attempts.map((a) => a.duplicateOf)).toEqual([undefined, 1, 1]);
    expect(attempts.map((a) => a.outcome).sort()).toEqual(['answered', 'caller-gone', 'caller-gone']);
  });

  it('sends a duplicate while the original is still in the upstream', async () => {
    plan([{ kind: 'duplicate', copies: 1 }]);
    await (await post()).body.dump();
    await settled();
    expect(upstream.received).toHaveLength(2);
    expect(log.of('s').map((a) => [a.attempt, a.duplicateOf, a.concurrentWith])).toEqual([
      [1, undefined, undefined],
      [2, 1, [1]],
    ]);
  });

  it("holds an attempt until the caller's retry arrives, then sends both at once", async () => {
    plan([{ kind: 'hold-for-retry', maxMs: 20_000 }]);
    await expect(post('{}', 200)).rejects.toThrow();
    // The caller gave up; the first attempt is still held, not sent.
    expect(upstream.received).toHaveLength(0);
    const retry = await post();
    expect(retry.statusCode).toBe(201);
    await retry.body.dump();
    await settled();
    expect(upstream.received).toHaveLength(2);
    expect(log.of('s').map((a) => [a.attempt, a.outcome, a.concurrentWith])).toEqual([
      [1, 'caller-gone', undefined],
      [2, 'answered', [1]],
    ]);
  });

  it('answers 503 itself without forwarding, once', async () => {
    plan([{ kind: 'unavailable' }]);
    const refused = await post();
    expect(refused.statusCode).toBe(503);
    await refused.body.dump();
    expect(upstream.received).toHaveLength(0);
    await (await post()).body.dump();
    await settled();
    expect(log.of('s').map((a) => [a.outcome, a.status])).toEqual([
      ['unavailable', 503],
      ['answered', 201],
    ]);
  });

  it('holds an attempt past its caller timeout, then still delivers it', async () => {
    plan([{ kind: 'hold', ms: 3000 }]);
    let callerGaveUp = false;
    const arrivedAfterCallerGaveUp = once(upstream.events, 'received').then(() => callerGaveUp);
    await expect(post('{}', 100)).rejects.toThrow();
    callerGaveUp = true;
    expect(await arrivedAfterCallerGaveUp).toBe(true);
    await settled();
    expect(log.of('s')[0]).toMatchObject({ status: 201, outcome: 'caller-gone', faults: ['hold 3000ms'] });
  });

  it('adds latency to the answer', async () => {
    plan([{ kind: 'latency', ms: 1500 }]);
    const answer = await post();
    expect(answer.statusCode).toBe(201);
    await answer.body.dump();
    await settled();
    const [attempt] = log.of('s');
    expect(attempt).toMatchObject({ outcome: 'answered', faults: ['latency 1500ms'] });
    // A lower bound only: a loaded machine can make it slower, never faster.
    expect((attempt?.endedMs ?? 0) - (attempt?.startedMs ?? 0)).toBeGreaterThanOrEqual(1490);
  });
});

describe('FaultProxy in a loop', () => {
  it('answers 503 past its cap on requests in flight, so a service calling its own hop cannot grow without bound', async () => {
    const port = await freePort();
    const log = new AttemptLog();
    // Its upstream is itself: each request forwards one more, as a service calling its own proxy would.
    const proxy = new FaultProxy({
      name: 'loop',
      host: '127.0.0.1',
      port,
      upstream: `http://127.0.0.1:${port}`,
      keyHeader: 'Idempotency-Key',
      log,
      maxInFlight: 16,
    });
    await proxy.start();
    try {
      const answer = await request(`http://127.0.0.1:${port}/charges`, { method: 'POST', body: '{}', signal: AbortSignal.timeout(30_000) });
      expect(answer.statusCode).toBe(503);
      expect(await answer.body.text()).toBe(
        "fault proxy loop: more than 16 requests in flight; does a service call its own hop's proxy?\n",
      );
      expect(log.of('').length).toBe(16);
    } finally {
      await proxy.stop();
    }
  });

  it('closes a connection past its cap as it opens, and keeps serving the ones it holds', async () => {
    const upstream = await startUpstream();
    const proxy = new FaultProxy({
      name: 'capped',
      host: '127.0.0.1',
      port: 0,
      upstream: upstream.url,
      keyHeader: 'Idempotency-Key',
      log: new AttemptLog(),
      maxConnections: 4,
    });
    const port = await proxy.start();
    const open = (): Promise<Socket> =>
      new Promise((resolve, reject) => {
        const socket = connect(port, '127.0.0.1', () => resolve(socket));
        socket.once('error', reject);
      });
    const held = await Promise.all([open(), open(), open(), open()]);
    try {
      const extra = await open();
      // The server closes it unread: the caller sees its end, never an answer.
      await once(extra, 'close');
      // The four it holds still serve: one of them sends a whole request and gets its answer.
      const first = held[0];
      const answered = once(first, 'data');
      first.write('POST /charges HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{}');
      expect(String((await answered)[0])).toMatch(/^HTTP\/1\.1 201/);
    } finally {
      for (const socket of held) socket.destroy();
      await proxy.stop();
      await upstream.close();
    }
  });
});
