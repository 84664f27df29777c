import { randomUUID } from 'node:crypto';
import { request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { Gunzip, gunzipSync } from 'node:zlib';
import { hashKey, MemoryStore, type IdempotencyEvent } from '@idempotency-chain/idempotency';
import { createRedisClient, RedisStore } from '@idempotency-chain/idempotency/redis';
import { IdempotencyModule, IdempotencyRunner } from '@idempotency-chain/idempotency/nest';
import { Injectable, type Type } from '@nestjs/common';
import { bootShop, ShopController, type Adapter, type ShopApp } from './fixture-app/shop.app';
import { Recorder } from './support/recorder';

/** A store that keeps what was stored, to check what a record holds. */
class InspectedStore extends MemoryStore {
  readonly stored: string[] = [];
  claims = 0;
  /** When set, the next claim waits for it before it is made. */
  nextClaimWaitsFor: Promise<void> | undefined;
  override async claim(...args: Parameters<MemoryStore['claim']>): ReturnType<MemoryStore['claim']> {
    this.claims += 1;
    const gate = this.nextClaimWaitsFor;
    this.nextClaimWaitsFor = undefined;
    await gate;
    return super.claim(...args);
  }
  override async complete(recordKey: string, owner: string, result: string, retentionMs: number): Promise<boolean> {
    this.stored.push(result);
    return super.complete(recordKey, owner, result, retentionMs);
  }
}

/** An app's own runner, provided as `IdempotencyRunner` (here it identifies requests as the module's does). */
@Injectable()
class AppRunner extends IdempotencyRunner {}

/** A store whose every call fails, as when Redis is unreachable. */
class DownStore extends MemoryStore {
  override claim(): never {
    throw new Error('connect ECONNREFUSED 127.0.0.1:6379');
  }
}

const key = () => `k-${randomUUID()}`;

/** Resolves once `check` holds, looking every 10 ms (for counters that have no event). */
async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 10));
}

/** Send a POST to `path` and abort it once the handler has run: the client goes away while the answer is still to come. */
async function leaveAfterTheHandler(
  shop: ShopApp,
  path: string,
  k: string,
  runs: string,
  headers: Record<string, string> = {},
): Promise<number> {
  const before = shop.runs.count[runs] ?? 0;
  const client = new AbortController();
  const gone = fetch(`${shop.url}${path}`, {
    method: 'POST',
    headers: { authorization: 'Bearer tenant-a', 'idempotency-key': k, ...headers },
    signal: client.signal,
  }).catch((error: unknown) => error);
  await until(() => shop.runs.count[runs] === before + 1);
  client.abort();
  await gone;
  return before;
}

describe.each<Adapter>(['fastify', 'express'])('a replay is the exact answer to the exact request, for the same caller (%s)', (adapter) => {
  let shop: ShopApp;
  let store: InspectedStore;
  const recorder = new Recorder();

  beforeAll(async () => {
    store = new InspectedStore();
    shop = await bootShop(adapter, { store, scope: undefined, observers: [recorder] });
  });
  afterAll(() => shop.app.close());

  async function post(
    path: string,
    { body, idempotencyKey, tenant = 'tenant-a' }: { body?: unknown; idempotencyKey?: string; tenant?: string } = {},
  ) {
    const response = await fetch(`${shop.url}${path}`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${tenant}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}),
      },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const bytes = Buffer.from(await response.arrayBuffer());
    const text = bytes.toString('utf8');
    let json: any;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return {
      status: response.status,
      headers: response.headers,
      bytes,
      text,
      json,
      replayed: response.headers.get('idempotent-replayed') === 'true',
    };
  }

  describe('1. the request is its method, concrete path, query and body', () => {
    it('one key sent to another order is 422, never order 1’s answer; order 2 is not refunded in its name', async () => {
      const k = key();
      const first = await post('/orders/1/refund', { body: { amountCents: 500 }, idempotencyKey: k });
      const other = await post('/orders/2/refund', { body: { amountCents: 500 }, idempotencyKey: k });

      expect(first.status).toBe(201);
      expect(other.status).toBe(422);
      expect(other.json).toMatchObject({ type: 'urn:idempotency-chain:problem:key-reused', status: 422 });
      expect(shop.runs.count['refund:2']).toBeUndefined();
    });

    it('one key with another query is 422: ?orderId=A then ?orderId=B', async () => {
      const k = key();
      const a = await post(`/payouts?orderId=A-${k}`, { idempotencyKey: k });
      const b = await post(`/payouts?orderId=B-${k}`, { idempotencyKey: k });
      const again = await post(`/payouts?orderId=A-${k}`, { idempotencyKey: k });

      expect([a.status, b.status, again.status]).toEqual([201, 422, 201]);
      expect(again.replayed).toBe(true);
      expect(again.text).toBe(a.text);
      expect(shop.runs.count[`payout:B-${k}`]).toBeUndefined();
    });

    it('the query’s parameter order does not make another request', async () => {
      const k = key();
      const first = await post(`/payouts?orderId=${k}&note=x`, { idempotencyKey: k });
      const reordered = await post(`/payouts?note=x&orderId=${k}`, { idempotencyKey: k });

      expect(reordered.status).toBe(201);
      expect(reordered.replayed).toBe(true);
      expect(reordered.text).toBe(first.text);
    });

    it('under keyMode fingerprint, keyless POST /cancel/7 and /cancel/8 are two cancellations; /cancel/7 again is a replay', async () => {
      const id = randomUUID();
      const seven = await post(`/cancel/${id}-7`);
      const eight = await post(`/cancel/${id}-8`);
      const sevenAgain = await post(`/cancel/${id}-7`);

      expect(seven.json).toMatchObject({ cancelled: `${id}-7` });
      expect(eight.json).toMatchObject({ cancelled: `${id}-8` });
      expect(eight.replayed).toBe(false);
      expect(sevenAgain.replayed).toBe(true);
      expect(sevenAgain.text).toBe(seven.text);
      expect([shop.runs.count[`cancel:${id}-7`], shop.runs.count[`cancel:${id}-8`]]).toEqual([1, 1]);
    });
  });

  describe('2-4. what is stored is what went on the wire, and a replay is those bytes', () => {
    it('a field the app hides (@Exclude under ClassSerializerInterceptor) is neither stored nor replayed', async () => {
      const k = key();
      const pan = '4242424242424242';
      const first = await post('/cards', { body: { pan }, idempotencyKey: k });
      const replay = await post('/cards', { body: { pan }, idempotencyKey: k });

      expect(first.json).toEqual({ cardId: expect.stringMatching(/^card_\d+$/), last4: '4242' });
      expect(replay.replayed).toBe(true);
      expect(replay.text).toBe(first.text);
      expect(store.stored.filter((record) => record.includes(pan))).toEqual([]);
    });

    it('the status and headers the handler set (202, Location) are replayed; Set-Cookie and other headers are not', async () => {
      const k = key();
      const first = await post('/exports', { idempotencyKey: k });
      const replay = await post('/exports', { idempotencyKey: k });

      expect(first.status).toBe(202);
      expect(first.headers.get('location')).toBe(`/exports/${first.json.exportId}`);
      expect(first.headers.get('set-cookie')).toContain('session=');
      expect(replay.status).toBe(202);
      expect(replay.headers.get('location')).toBe(first.headers.get('location'));
      expect(replay.headers.get('content-type')).toBe(first.headers.get('content-type'));
      expect(replay.text).toBe(first.text);
      expect(replay.replayed).toBe(true);
      expect(replay.headers.get('set-cookie')).toBeNull();
      expect(replay.headers.get('x-export-run')).toBeNull();
      expect(shop.runs.count.export).toBe(first.json.exportId);
    });

    it('a StreamableFile (application/pdf, binary) is replayed byte for byte with its type and disposition', async () => {
      const k = key();
      const first = await post('/statements', { idempotencyKey: k });
      const replay = await post('/statements', { idempotencyKey: k });

      expect(first.status).toBe(201);
      expect(first.headers.get('content-type')).toBe('application/pdf');
      expect(first.bytes.subarray(0, 8).toString()).toBe('%PDF-1.7');
      expect(replay.replayed).toBe(true);
      expect(replay.bytes.equals(first.bytes)).toBe(true);
      expect(replay.headers.get('content-type')).toBe('application/pdf');
      expect(replay.headers.get('content-disposition')).toBe('attachment; filename="statement.pdf"');
      expect(replay.headers.get('content-length')).toBe(String(first.bytes.length));
    });

    it('a result the serializer cannot write (a BigInt) after the side effect is stored as the error it became: the retry does not run it again', async () => {
      const k = key();
      const before = shop.runs.count.bigint ?? 0;
      const first = await post('/bigint', { idempotencyKey: k });
      const retry = await post('/bigint', { idempotencyKey: k });

      expect(first.status).toBe(500);
      expect(retry.status).toBe(500);
      expect(retry.replayed).toBe(true);
      expect(retry.text).toBe(first.text);
      expect(shop.runs.count.bigint).toBe(before + 1);
    });

    it('an answer larger than maxResponseBytes reaches its caller whole; its record holds a 500 result-not-stored, never a second run', async () => {
      const k = key();
      const before = shop.runs.count.big ?? 0;
      const first = await post('/big', { idempotencyKey: k });
      const retry = await post('/big', { idempotencyKey: k });

      expect(first.status).toBe(201);
      expect(first.json.padding).toHaveLength(4096);
      expect(retry.status).toBe(500);
      expect(retry.replayed).toBe(true);
      expect(retry.json).toMatchObject({ type: 'urn:idempotency-chain:problem:result-not-stored', status: 500 });
      expect(retry.headers.get('content-type')).toBe('application/problem+json');
      expect(shop.runs.count.big).toBe(before + 1);
    });
  });

  describe('5. the library’s errors are answered with their status by an app without ProblemDetailsFilter', () => {
    it('a missing key is 400, a malformed one 400, a reused one 422 - JSON problem documents, no 500', async () => {
      const missing = await post('/orders/9/refund', { body: { amountCents: 1 } });
      const malformed = await post('/orders/9/refund', { body: { amountCents: 1 }, idempotencyKey: '"unterminated' });
      const k = key();
      await post('/orders/9/refund', { body: { amountCents: 1 }, idempotencyKey: k });
      const reused = await post('/orders/9/refund', { body: { amountCents: 2 }, idempotencyKey: k });

      expect(missing).toMatchObject({ status: 400, json: { type: 'urn:idempotency-chain:problem:missing-key', status: 400 } });
      expect(malformed).toMatchObject({ status: 400, json: { type: 'urn:idempotency-chain:problem:invalid-key', status: 400 } });
      expect(reused).toMatchObject({ status: 422, json: { type: 'urn:idempotency-chain:problem:key-reused', status: 422 } });
    });

    it('a duplicate in flight under reject is 409 with Retry-After', async () => {
      const k = key();
      const before = shop.runs.count.slow ?? 0;
      const first = post('/slow', { idempotencyKey: k });
      await until(() => shop.runs.count.slow === before + 1);
      const duplicate = await post('/slow', { idempotencyKey: k });
      await first;

      expect(duplicate.status).toBe(409);
      expect(duplicate.json).toMatchObject({ type: 'urn:idempotency-chain:problem:in-flight', status: 409 });
      expect(Number(duplicate.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    });

    it('a body nested 20,000 levels deep is 400 invalid-request, not a 500, and leaves no record', async () => {
      const k = key();
      const deep = `{"amountCents":${'['.repeat(20_000)}${']'.repeat(20_000)}}`;
      const refused = await post('/orders/deep/refund', { body: deep, idempotencyKey: k });
      const corrected = await post('/orders/deep/refund', { body: { amountCents: 3 }, idempotencyKey: k });

      expect(refused).toMatchObject({ status: 400, json: { type: 'urn:idempotency-chain:problem:invalid-request', status: 400 } });
      expect(corrected.status).toBe(201);
      expect(corrected.replayed).toBe(false);
    });
  });

  it('a holder whose client went away still completes its record: the retry is a replay, the handler ran once', async () => {
    const k = key();
    const before = shop.runs.count.slow ?? 0;
    const client = new AbortController();
    const gone = fetch(`${shop.url}/slow`, {
      method: 'POST',
      headers: { authorization: 'Bearer tenant-a', 'idempotency-key': k },
      signal: client.signal,
    }).catch((error: unknown) => error);
    await until(() => shop.runs.count.slow === before + 1);
    client.abort();
    await gone;
    let retry = await post('/slow', { idempotencyKey: k });
    // Still running: in flight (409) until the handler ends and its answer is stored.
    while (retry.status === 409)
      retry = (await new Promise((resolve) => setTimeout(resolve, 100)), await post('/slow', { idempotencyKey: k }));

    expect(retry.status).toBe(201);
    expect(retry.replayed).toBe(true);
    expect(shop.runs.count.slow).toBe(before + 1);
  });

  /** Retry `path` until it is no longer in flight (409). */
  async function settled(path: string, k: string) {
    let retry = await post(path, { idempotencyKey: k });
    while (retry.status === 409)
      retry = (await new Promise((resolve) => setTimeout(resolve, 100)), await post(path, { idempotencyKey: k }));
    return retry;
  }

  it('a holder whose client went away while the app still renders its answer, for longer than a lease, stores that answer: the retry is its replay, not a 500', async () => {
    const k = key();
    // The handler has returned; its answer is held up by an interceptor (4 s, over two leases) when the client leaves.
    const before = await leaveAfterTheHandler(shop, '/slow-render', k, 'slow-render');
    const retry = await settled('/slow-render', k);

    expect(retry).toMatchObject({ status: 201, replayed: true, json: { run: before + 1 } });
    expect(shop.runs.count['slow-render']).toBe(before + 1);
  });

  it('a holder whose client went away and whose answer never comes stores a 500 result-not-stored once a duplicate would stop waiting: the key is not held for good, nor run again', async () => {
    const k = key();
    // Its answer is held up for good, here only: the retries are answered as usual.
    const before = await leaveAfterTheHandler(shop, '/never-rendered', k, 'never-rendered', { 'x-audit': 'hang' });
    const retry = await settled('/never-rendered', k);

    expect(retry).toMatchObject({ status: 500, replayed: true, json: { type: 'urn:idempotency-chain:problem:result-not-stored' } });
    expect(shop.runs.count['never-rendered']).toBe(before + 1);
  });

  it('a holder whose client went away while its key was being claimed is watched all the same: its answer never comes, so it stores a 500 result-not-stored', async () => {
    const k = key();
    const before = shop.runs.count['never-rendered'] ?? 0;
    let claimed!: () => void;
    store.nextClaimWaitsFor = new Promise((resolve) => (claimed = resolve));
    const server = shop.app.getHttpServer() as Server;
    const closed = new Promise<void>((resolve) => {
      const onRequest = (request: IncomingMessage, response: ServerResponse) => {
        if (request.headers['idempotency-key'] !== k) return;
        server.off('request', onRequest);
        response.once('close', () => resolve());
      };
      server.on('request', onRequest);
    });
    const client = new AbortController();
    const gone = fetch(`${shop.url}/never-rendered`, {
      method: 'POST',
      headers: { authorization: 'Bearer tenant-a', 'idempotency-key': k, 'x-audit': 'hang' },
      signal: client.signal,
    }).catch((error: unknown) => error);
    await until(() => store.nextClaimWaitsFor === undefined);
    client.abort();
    await gone;
    await closed; // the server saw the client leave while the claim was still on its way
    claimed();
    const retry = await settled('/never-rendered', k);

    expect(retry).toMatchObject({ status: 500, replayed: true, json: { type: 'urn:idempotency-chain:problem:result-not-stored' } });
    expect(shop.runs.count['never-rendered']).toBe(before + 1);
  });

  describe('the handler decides, not what ran around it', () => {
    it.each(['timeout-outer', 'timeout-inner'])(
      'a timeout interceptor (%s) answers 408 while the handler still charges: the key stays held, the retries never run it again',
      async (route) => {
        const k = key();
        const first = await post(`/${route}`, { idempotencyKey: k });
        // The caller retries the 408 at once, while the handler is still running: in flight (an outer timeout cuts their wait short).
        const retries = await Promise.all([post(`/${route}`, { idempotencyKey: k }), post(`/${route}`, { idempotencyKey: k })]);
        await until(() => shop.runs.count[`${route}:done`] === 1);
        let later = await post(`/${route}`, { idempotencyKey: k });
        while (later.status === 408) later = await post(`/${route}`, { idempotencyKey: k });

        expect(first.status).toBe(408);
        for (const retry of retries) expect([408, 500]).toContain(retry.status);
        // Its answer never reached the wire: the record says so, instead of running it again.
        expect(later).toMatchObject({ status: 500, replayed: true, json: { type: 'urn:idempotency-chain:problem:result-not-stored' } });
        expect(shop.runs.count[route]).toBe(1);
      },
    );

    it('an answer that fails with 400 after the handler returned is stored as it became: the handler runs once', async () => {
      const k = key();
      const before = shop.runs.count['fail-after'] ?? 0;
      const answers = [await post('/fail-after', { idempotencyKey: k }), await post('/fail-after', { idempotencyKey: k })];

      expect(answers.map((a) => a.status)).toEqual([400, 400]);
      expect(answers[1]?.replayed).toBe(true);
      expect(shop.runs.count['fail-after']).toBe(before + 1);
    });

    it('a handler that writes its response itself (@Res()) is replayed, not left hanging', async () => {
      const k = key();
      const first = await post('/writes-itself', { idempotencyKey: k });
      const replay = await post('/writes-itself', { idempotencyKey: k });
      const fromMemory = await post('/writes-itself', { idempotencyKey: k });

      expect(first.status).toBe(201);
      expect(replay).toMatchObject({ status: 201, replayed: true, text: first.text });
      expect(fromMemory).toMatchObject({ status: 201, replayed: true, text: first.text });
    });

    it('one handler inherited by two controllers is two routes, each with its own operation and fingerprint', async () => {
      const k = key();
      const orders = [
        await post('/orders-b', { body: { item: 'a', amountCents: 1 }, idempotencyKey: k }),
        await post('/orders-b', { body: { item: 'b', amountCents: 1 }, idempotencyKey: k }),
      ];
      const refunds = [
        await post('/refunds-b', { body: { item: 'a', amountCents: 1 }, idempotencyKey: k }),
        await post('/refunds-b', { body: { item: 'b', amountCents: 1 }, idempotencyKey: k }),
      ];

      expect(orders.map((a) => a.status)).toEqual([201, 422]); // every field counts
      expect(refunds.map((a) => [a.status, a.replayed])).toEqual([
        [201, false],
        [201, true],
      ]); // only amountCents
    });

    it('@Idempotent on the class and on the method runs once, under the method’s operation, without waiting for itself', async () => {
      const k = key();
      const first = await post('/both', { idempotencyKey: k });
      const replay = await post('/both', { idempotencyKey: k });

      expect(first.status).toBe(201);
      expect(replay).toMatchObject({ status: 201, replayed: true, text: first.text });
    });

    it('a 503 larger than maxResponseBytes releases the key like any 503', async () => {
      const k = key();
      const before = shop.runs.count['big-error'] ?? 0;
      const answers = [await post('/big-error', { idempotencyKey: k }), await post('/big-error', { idempotencyKey: k })];

      expect(answers.map((a) => [a.status, a.replayed])).toEqual([
        [503, false],
        [503, false],
      ]);
      expect(shop.runs.count['big-error']).toBe(before + 2);
    });

    it('a file that fails half way is cut off, never glued to an error document; the retry learns it ran', async () => {
      const k = key();
      const cut = await post('/broken-stream', { idempotencyKey: k }).then(
        (answer) => answer.bytes.toString(),
        (error: unknown) => `connection error: ${String(error)}`,
      );
      const retry = await post('/broken-stream', { idempotencyKey: k });

      expect(cut).not.toMatch(/statusCode|Bad Request|Internal/);
      expect(retry).toMatchObject({ status: 500, replayed: true, json: { type: 'urn:idempotency-chain:problem:result-not-stored' } });
      expect(shop.runs.count['broken-stream']).toBe(1);
    });

    it('an isFinal that throws stores the answer as it went on the wire and reports the rule’s error: the retry is its replay, never a 409', async () => {
      const k = key();
      const first = await post('/rule-throws', { idempotencyKey: k });
      const retry = await post('/rule-throws', { idempotencyKey: k });

      expect(first).toMatchObject({ status: 201, replayed: false });
      expect(retry).toMatchObject({ status: 201, replayed: true, text: first.text });
      expect(shop.runs.count['rule-throws']).toBe(first.json.run);
      const ruled = recorder.events.filter((event) => event.operation === 'shop.rule-throws');
      expect(ruled.map((event) => event.outcome).slice(-3)).toEqual(['is_final_threw', 'executed', 'replayed']);
      expect(String(ruled.at(-3)?.error)).toContain('isFinal bug');
    });

    it('an isFinal that throws on a 504 the handler threw leaves the decision to the built-in rule: released, the retry runs', async () => {
      const k = key();
      const first = await post('/rule-throws-on-timeout', { idempotencyKey: k });
      const retry = await post('/rule-throws-on-timeout', { idempotencyKey: k });

      expect(first).toMatchObject({ status: 504, replayed: false });
      expect(retry).toMatchObject({ status: 201, replayed: false, json: { run: 2 } });
      const ruled = recorder.events.filter((event) => event.operation === 'shop.rule-throws-on-timeout');
      expect(ruled.map((event) => event.outcome)).toEqual(['is_final_threw', 'released', 'is_final_threw', 'executed']);
    });

    it('a 204 carries no Content-Length, first time or replayed', async () => {
      const k = key();
      const answers = [await post('/accepted-empty', { idempotencyKey: k }), await post('/accepted-empty', { idempotencyKey: k })];

      expect(answers.map((a) => [a.status, a.replayed, a.headers.get('content-length')])).toEqual([
        [204, false, null],
        [204, true, null],
      ]);
    });

    it('the replays after the first come from memory, without the store, and are the same answer: status, headers, bytes', async () => {
      const [exported, statement] = [key(), key()];
      const first = await post('/exports', { idempotencyKey: exported });
      await post('/statements', { idempotencyKey: statement });
      const fromStore = [await post('/exports', { idempotencyKey: exported }), await post('/statements', { idempotencyKey: statement })];
      const claims = store.claims;
      const fromMemory = [await post('/exports', { idempotencyKey: exported }), await post('/statements', { idempotencyKey: statement })];
      const reused = await post('/exports', { body: { format: 'csv' }, idempotencyKey: exported });

      expect(store.claims).toBe(claims);
      fromMemory.forEach((replay, i) => {
        const stored = fromStore[i]!;
        expect(replay.replayed).toBe(true);
        expect(replay.status).toBe(stored.status);
        expect([...replay.headers].filter(([name]) => name !== 'date')).toEqual([...stored.headers].filter(([name]) => name !== 'date'));
        expect(replay.bytes.equals(stored.bytes)).toBe(true);
      });
      expect(fromMemory[0]!.text).toBe(first.text);
      expect(reused.status).toBe(422);
      expect(shop.runs.count.export).toBe(first.json.exportId);
    });

    it('a replay keeps the headers of its own request (CSP, CORS)', async () => {
      const k = key();
      await post('/orders/5/refund', { body: { amountCents: 5 }, idempotencyKey: k });
      const replay = await post('/orders/5/refund', { body: { amountCents: 5 }, idempotencyKey: k });

      expect(replay.replayed).toBe(true);
      expect(replay.headers.get('content-security-policy')).toBe("default-src 'self'");
      expect(replay.headers.get('access-control-allow-origin')).toBe('https://shop.example');
    });
  });

  describe('a handler run again within its request (an interceptor’s rxjs retry())', () => {
    const outcomesOf = (k: string) => recorder.events.filter((event) => event.keyHash === hashKey(k)).map((event) => event.outcome);

    it('after a transient error it runs again under the same execution: one answer, stored, and no wait for itself', async () => {
      const k = key();
      const before = shop.runs.count.flaky ?? 0;
      const first = await post('/flaky', { idempotencyKey: k });
      const again = await post('/flaky', { idempotencyKey: k });

      expect(first).toMatchObject({ status: 201, replayed: false, json: { run: before + 2 } });
      expect(again).toMatchObject({ status: 201, replayed: true, text: first.text });
      expect(shop.runs.count.flaky).toBe(before + 2);
      expect(outcomesOf(k)).toEqual(['executed', 'replayed']);
    });

    it('after its client left and the key was given back, it runs again under a fresh claim: its answer is stored, and the process lives on', async () => {
      const k = key();
      // The first run throws; its client leaves; with no answer for a lease, the key is given back; 3 s after the error, the retry.
      const before = await leaveAfterTheHandler(shop, '/flaky', k, 'flaky', { 'x-retry-after-ms': '3000' });
      await until(() => shop.runs.count.flaky === before + 2);
      const retry = await settled('/flaky', k);

      expect(retry).toMatchObject({ status: 201, replayed: true, json: { run: before + 2 } });
      expect(shop.runs.count.flaky).toBe(before + 2);
      expect(outcomesOf(k)).toEqual(['released', 'executed', 'replayed']);
    });

    it('once it returned, it never runs again: an interceptor that fails after it and retries gets a 500 result-not-stored, stored as the answer', async () => {
      const k = key();
      const first = await post('/charged-then-failed', { idempotencyKey: k });
      const again = await post('/charged-then-failed', { idempotencyKey: k });

      expect(first).toMatchObject({ status: 500, json: { type: 'urn:idempotency-chain:problem:result-not-stored' } });
      expect(again).toMatchObject({ status: 500, replayed: true, text: first.text });
      expect(shop.runs.count['charged-then-failed']).toBe(1);
    });

    it('a 499 Client Closed Request is never stored as the key’s answer: the retry runs', async () => {
      const k = key();
      const before = shop.runs.count['client-closed'] ?? 0;
      const first = await post('/client-closed', { idempotencyKey: k });
      const again = await post('/client-closed', { idempotencyKey: k });

      expect([first.status, again.status, again.replayed]).toEqual([499, 499, false]);
      expect(shop.runs.count['client-closed']).toBe(before + 2);
    });
  });

  it('a body compressed by the app is stored as sent, and replayed decompressed to a client that does not accept it', async () => {
    const k = key();
    const send = (acceptEncoding: string) =>
      new Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
        const body = JSON.stringify({ amountCents: 12 });
        const req = httpRequest(`${shop.url}/orders/zip/refund`, {
          method: 'POST',
          headers: {
            authorization: 'Bearer tenant-a',
            'content-type': 'application/json',
            'idempotency-key': k,
            'accept-encoding': acceptEncoding,
          },
        });
        req.on('response', (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
        });
        req.on('error', reject);
        req.end(body);
      });
    const gzipped = await send('gzip');
    const plain = await send('identity');
    const gzipAgain = await send('gzip, br'); // this replay and the next from memory
    const plainAgain = await send('identity');

    const expected = adapter === 'fastify' ? gunzipSync(gzipped.body) : gzipped.body; // only the Fastify shop compresses
    expect(gzipped.status).toBe(201);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.body.equals(expected)).toBe(true);
    expect(plain.headers['idempotent-replayed']).toBe('true');
    expect(gzipAgain.body.equals(gzipped.body)).toBe(true);
    expect(gzipAgain.headers['content-encoding']).toBe(gzipped.headers['content-encoding']);
    expect(plainAgain.body.equals(expected)).toBe(true);
    expect(plainAgain.headers['content-encoding']).toBeUndefined();
  });

  // Only the Fastify shop compresses its answers: the case exists on it alone, rather than skipped on Express.
  if (adapter === 'fastify')
    it('a compressed answer that would inflate past maxResponseBytes is 406 to a client that does not accept it: decoded no further than the limit', async () => {
      const k = key();
      const send = (acceptEncoding: string) =>
        fetch(`${shop.url}/report`, {
          method: 'POST',
          headers: { authorization: 'Bearer tenant-a', 'idempotency-key': k, 'accept-encoding': acceptEncoding },
        });
      const first = await send('gzip');
      await first.arrayBuffer();
      // What the decoder produces, chunk by chunk, of this replay.
      const pushed = vi.spyOn(Gunzip.prototype, 'push');
      const plain = await send('identity');
      const body = Buffer.from(await plain.arrayBuffer());
      const decoded = pushed.mock.calls.reduce((bytes, [chunk]) => bytes + (Buffer.isBuffer(chunk) ? chunk.length : 0), 0);
      pushed.mockRestore();
      const fromMemory = await send('identity'); // the replays after the first are answered from memory
      await fromMemory.arrayBuffer();

      expect(first.headers.get('content-encoding')).toBe('gzip');
      expect(plain.status).toBe(406);
      expect(plain.headers.get('content-encoding')).toBeNull();
      expect(JSON.parse(body.toString())).toMatchObject({ type: 'urn:idempotency-chain:problem:encoding-not-acceptable', status: 406 });
      // The limit (2048 bytes in the shop) and at most one chunk of zlib's (16 KiB) past it, of the 1.5 MB it would inflate to.
      expect(decoded).toBeGreaterThan(2048);
      expect(decoded).toBeLessThanOrEqual(2048 + 16 * 1024);
      expect(fromMemory.status).toBe(406);
      expect(shop.runs.count.report).toBe(1);
    });

  // Only the Fastify shop compresses its answers: the case exists on it alone, rather than skipped on Express.
  if (adapter === 'fastify')
    it('concurrent replays decompress within maxDecompressingBytes: those past it are 503 with Retry-After, and a later replay is answered', async () => {
      // Room for two decompressions of at most maxResponseBytes (2048 in the shop) each.
      const budgeted = await bootShop(adapter, { scope: undefined, maxDecompressingBytes: 2 * 2048 });
      const k = key();
      const send = (acceptEncoding: string) =>
        fetch(`${budgeted.url}/receipt`, {
          method: 'POST',
          headers: { authorization: 'Bearer tenant-a', 'idempotency-key': k, 'accept-encoding': acceptEncoding },
        }).then(async (response) => ({ status: response.status, headers: response.headers, text: await response.text() }));
      const first = await send('gzip');
      // Every decompression starts when the gate opens, so that all of them are in flight at once; the decoder's output is counted.
      const end = Gunzip.prototype.end;
      const gated: (() => void)[] = [];
      const ending = vi.spyOn(Gunzip.prototype, 'end').mockImplementation(function (this: Gunzip, ...args: unknown[]) {
        gated.push(() => (end as (...args: unknown[]) => void).apply(this, args));
        return this;
      });
      const pushed = vi.spyOn(Gunzip.prototype, 'push');
      const replays = 12;
      let answered = 0;
      const burst = Array.from({ length: replays }, () => send('identity').finally(() => (answered += 1)));
      await until(() => answered + gated.length === replays);
      const refusedBeforeTheGate = answered;
      for (const start of gated) start();
      const answers = await Promise.all(burst);
      const decoded = pushed.mock.calls.reduce((bytes, [chunk]) => bytes + (Buffer.isBuffer(chunk) ? chunk.length : 0), 0);
      ending.mockRestore();
      pushed.mockRestore();
      const later = await send('identity');
      await budgeted.app.close();

      const plain = (answer: { status: number }) => answer.status === 201;
      const busy = answers.filter((answer) => !plain(answer));
      expect(first.headers.get('content-encoding')).toBe('gzip');
      // Two receipts of about 1.8 KB decoded while the burst was in flight, never one per replay.
      expect(decoded).toBeLessThanOrEqual(2 * 2048);
      expect(first.text.length).toBeGreaterThan(1500);
      expect(decoded).toBe(2 * first.text.length);
      expect(refusedBeforeTheGate).toBe(replays - 2);
      expect(answers.filter(plain).map((answer) => [answer.headers.get('content-encoding'), answer.text])).toEqual(
        Array.from({ length: 2 }, () => [null, first.text]),
      );
      expect(busy.map((answer) => [answer.status, answer.headers.get('retry-after')])).toEqual(
        Array.from({ length: replays - 2 }, () => [503, '1']),
      );
      expect(JSON.parse(busy[0]?.text ?? '')).toMatchObject({ type: 'urn:idempotency-chain:problem:decompression-busy', status: 503 });
      expect([later.status, later.headers.get('content-encoding'), later.text]).toEqual([201, null, first.text]);
      expect(budgeted.runs.count.receipt).toBe(1);
    });

  it('a body that was not parsed when the key was checked is refused (400), never fingerprinted as empty', async () => {
    const send = (amount: string) =>
      fetch(`${shop.url}/orders/text/refund`, {
        method: 'POST',
        headers: { authorization: 'Bearer tenant-a', 'content-type': 'text/plain', 'idempotency-key': 'text-key' },
        body: amount,
      });
    const [first, second] = [await send('100'), await send('999999')];
    if (adapter === 'express') {
      // Express has no text parser by default: the body is unparsed.
      expect([first.status, second.status]).toEqual([400, 400]);
      expect(await second.json()).toMatchObject({ type: 'urn:idempotency-chain:problem:invalid-request' });
    } else {
      // Fastify parses text/plain: the two amounts are two requests.
      expect([first.status, second.status]).toEqual([201, 422]);
    }
  });

  describe('6. records are scoped by the caller by default', () => {
    it('tenant B presenting tenant A’s key gets its own execution: neither A’s answer nor a 422', async () => {
      const k = key();
      const a = await post('/orders/77/refund', { body: { amountCents: 700 }, idempotencyKey: k, tenant: 'tenant-a' });
      const b = await post('/orders/77/refund', { body: { amountCents: 700 }, idempotencyKey: k, tenant: 'tenant-b' });
      const bOther = await post('/orders/77/refund', { body: { amountCents: 701 }, idempotencyKey: `${k}-b`, tenant: 'tenant-b' });
      const aAgain = await post('/orders/77/refund', { body: { amountCents: 700 }, idempotencyKey: k, tenant: 'tenant-a' });

      expect(a.status).toBe(201);
      expect(b.status).toBe(201);
      expect(b.replayed).toBe(false);
      expect(b.json.refund).not.toBe(a.json.refund);
      expect(bOther.status).toBe(201);
      expect(aAgain.replayed).toBe(true);
      expect(aAgain.text).toBe(a.text);
    });
  });
});

describe.each<Adapter>(['fastify', 'express'])('the store down, and decisions taken at boot (%s)', (adapter) => {
  it('answers 503 with Retry-After when the store is down, without ProblemDetailsFilter; the handler does not run', async () => {
    const shop = await bootShop(adapter, { store: new DownStore(), scope: 'shared' });
    try {
      const response = await fetch(`${shop.url}/orders/1/refund`, {
        method: 'POST',
        headers: { authorization: 'Bearer t', 'content-type': 'application/json', 'idempotency-key': key() },
        body: '{"amountCents":1}',
      });
      expect(response.status).toBe(503);
      expect(response.headers.get('retry-after')).toBe('1');
      expect(await response.json()).toMatchObject({ type: 'urn:idempotency-chain:problem:store-unavailable', status: 503 });
      expect(shop.runs.count['refund:1']).toBeUndefined();
    } finally {
      await shop.app.close();
    }
  });

  it('refuses a request whose scope cannot be resolved (500 scope-unresolved): it is never mixed with another caller’s', async () => {
    const shop = await bootShop(adapter, { scope: () => undefined });
    try {
      const response = await fetch(`${shop.url}/payouts?orderId=x`, {
        method: 'POST',
        headers: { authorization: 'Bearer t', 'idempotency-key': key() },
      });
      expect(response.status).toBe(500);
      expect(await response.json()).toMatchObject({ type: 'urn:idempotency-chain:problem:scope-unresolved', status: 500 });
      expect(shop.runs.count['payout:x']).toBeUndefined();
    } finally {
      await shop.app.close();
    }
  });

  it('warns at boot when the app has not decided what scopes its records', async () => {
    const warnings: string[] = [];
    const logger = { log() {}, error() {}, debug() {}, verbose() {}, warn: (message: unknown) => warnings.push(String(message)) };
    const undecided = await bootShop(adapter, { logger });
    const decided = await bootShop(adapter, { scope: 'shared', logger });
    await Promise.all([undecided.app.close(), decided.app.close()]);

    expect(warnings).toEqual([expect.stringMatching(/shop: no idempotency scope decided.*request\.user.*'shared'/s)]);
  });

  it.each([
    [{ keyMode: 'require' as never }, /keyMode must be one of required, optional, fingerprint, none \(got "require"\)/],
    [{ scope: 'Shared' as never }, /scope must be a resolver function or 'shared' \(got "Shared"\)/],
    [{ maxResponseBytes: -1 }, /maxResponseBytes must be a positive whole number of bytes/],
    [{ maxResponseBytes: Number.NaN }, /maxResponseBytes/],
    [{ drainTimeoutMs: -1 }, /drainTimeoutMs must be a number of milliseconds, 0 or more \(got -1\)/],
    [{ maxDecompressingBytes: 1024 }, /maxDecompressingBytes must be a whole number of bytes, at least maxResponseBytes \(got 1024\)/],
  ])('refuses to boot with a mistyped option %j, naming it', async (options, message) => {
    await expect(bootShop(adapter, options)).rejects.toThrow(message);
  });

  it('refuses to boot with a policy that could run one key twice, naming the route and the option', async () => {
    await expect(bootShop(adapter, { defaults: { leaseMs: 1_000, heartbeatMs: 2_000 }, scope: 'shared' })).rejects.toThrow(
      /heartbeatMs \(2000\) must be shorter than leaseMs \(1000\)/,
    );
    await expect(bootShop(adapter, { operations: { 'shop.refund': { leaseMs: 0 } }, scope: 'shared' })).rejects.toThrow(
      /operation shop\.refund: leaseMs/,
    );
  });
});

describe.each<Adapter>(['fastify', 'express'])('graceful shutdown (%s)', (adapter) => {
  const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  const prefix = `test:shutdown:${randomUUID()}:`;
  /** An instance of the shop on Redis that closes its store on shutdown, as a deployed service does. */
  const instance = (
    options: { drainTimeoutMs?: number; events?: IdempotencyEvent[]; warnings?: string[]; runner?: Type<IdempotencyRunner> } = {},
  ) =>
    bootShop(adapter, {
      runner: options.runner,
      store: new RedisStore({ client: createRedisClient(REDIS_URL), prefix, ownsClient: true }),
      closeStore: true,
      scope: 'shared',
      drainTimeoutMs: options.drainTimeoutMs,
      observers: [{ record: (event) => options.events?.push(event) }],
      logger: { log() {}, error() {}, debug() {}, verbose() {}, warn: (message: unknown) => options.warnings?.push(String(message)) },
    });

  afterAll(async () => {
    const client = createRedisClient(REDIS_URL);
    await client.connect();
    const keys = await client.keys(`${prefix}*`);
    if (keys.length > 0) await client.del(...keys);
    await client.quit();
  });

  /** Retry `k` on a new instance of the shop, as after a deploy: its answer, and how often the handler ran there. */
  async function retryOnTheNextInstance(path: string, k: string, runs: string) {
    const next = await instance();
    try {
      const response = await fetch(`${next.url}${path}`, { method: 'POST', headers: { authorization: 'Bearer t', 'idempotency-key': k } });
      return {
        status: response.status,
        replayed: response.headers.get('idempotent-replayed') === 'true',
        json: await response.json(),
        ranThere: next.runs.count[runs],
      };
    } finally {
      await next.app.close();
    }
  }

  it('an execution whose client went away stores its answer before the store is closed: the retry on the next instance is its replay', async () => {
    const k = key();
    const first = await instance();
    // A 1 s handler, whose client leaves while it runs.
    await leaveAfterTheHandler(first, '/slow', k, 'slow');
    // SIGTERM: the server stops at once (nobody is connected), the handler still runs.
    await first.app.close();

    expect(await retryOnTheNextInstance('/slow', k, 'slow')).toEqual({
      status: 201,
      replayed: true,
      json: { run: 1 },
      ranThere: undefined,
    });
  });

  it.each([
    ['the module’s runner', undefined],
    ['an app’s own runner', AppRunner],
  ])(
    'waits no longer than drainTimeoutMs for an answer that is not whole (%s): it stores a 500 result-not-stored while the store is open, and the retry on the next instance is its replay',
    async (_name, runner) => {
      const k = key();
      const events: IdempotencyEvent[] = [];
      const warnings: string[] = [];
      const shop = await instance({ drainTimeoutMs: 100, events, warnings, runner });
      // The handler has returned; its answer is held up for good (the execution would end only once a duplicate stops waiting, 2 s).
      await leaveAfterTheHandler(shop, '/never-rendered', k, 'never-rendered', { 'x-audit': 'hang' });
      await shop.app.close();

      expect(warnings).toEqual([
        expect.stringMatching(
          /^shop shop\.never-rendered key \w{12} epoch \d+: unstorable: This request was executed, but its answer could not be stored: the server shut down before its answer was whole$/,
        ),
        expect.stringMatching(
          /^shop: 1 idempotent execution\(s\) whose handler had ended but whose answer was not whole 100 ms into shutdown ended there: 1 completed as a 500 result-not-stored \(their work is not run again once it is stored\), 0 released \(their handler threw\)$/,
        ),
      ]);
      expect(events.map((event) => event.outcome)).toEqual(['unstorable', 'executed']);

      expect(await retryOnTheNextInstance('/never-rendered', k, 'never-rendered')).toMatchObject({
        status: 500,
        replayed: true,
        json: { type: 'urn:idempotency-chain:problem:result-not-stored' },
        ranThere: undefined,
      });
    },
  );

  it('waits no longer than drainTimeoutMs for a handler: one still running then is logged, and its late completion is reported as a store error', async () => {
    const events: IdempotencyEvent[] = [];
    const warnings: string[] = [];
    const shop = await instance({ drainTimeoutMs: 100, events, warnings });
    // The client leaves while the handler (1 s) has just begun.
    const client = new AbortController();
    const gone = fetch(`${shop.url}/slow`, {
      method: 'POST',
      headers: { authorization: 'Bearer t', 'idempotency-key': key() },
      signal: client.signal,
    }).catch((error: unknown) => error);
    await until(() => shop.runs.count.slow === 1);
    client.abort();
    await gone;
    await shop.app.close();

    expect(warnings).toEqual([
      expect.stringMatching(
        /^shop: 1 idempotent execution\(s\) still running 100 ms into shutdown; an answer not stored leaves its key held until its lease ends, and the retry after that runs it again$/,
      ),
    ]);
    // The handler ends after the store was closed: its answer cannot be stored, and says so.
    await until(() => events.some((event) => event.outcome === 'store_error'));
    expect(events.filter((event) => event.outcome === 'executed')).toEqual([]);
  });

  it('leaves a handler that writes its answer itself (@Res()) to its lease: it returned, but its work may still be on its way', async () => {
    const events: IdempotencyEvent[] = [];
    const warnings: string[] = [];
    const shop = await instance({ drainTimeoutMs: 100, events, warnings });
    // The handler returns at once and answers two seconds later: far past the drain's 100 ms, on a loaded machine too.
    await leaveAfterTheHandler(shop, '/writes-itself-later', key(), 'writes-itself-later');
    await shop.app.close();

    expect(warnings).toEqual([expect.stringMatching(/^shop: 1 idempotent execution\(s\) still running 100 ms into shutdown;/)]);
    // Its answer comes after the store was closed, as before: it cannot be stored, and says so.
    await until(() => events.some((event) => event.outcome === 'store_error'));
    expect(events.map((event) => event.outcome)).not.toContain('unstorable');
  });

  it('drains once for calls made while a drain runs (the services drain where the server closes, an app in its own hook)', async () => {
    const warnings: string[] = [];
    const shop = await instance({ drainTimeoutMs: 100, warnings });
    await leaveAfterTheHandler(shop, '/slow', key(), 'slow');
    const idempotency = shop.app.get(IdempotencyModule, { strict: false });
    await Promise.all([idempotency.drain(), idempotency.drain()]);

    expect(warnings).toEqual([expect.stringMatching(/^shop: 1 idempotent execution\(s\) still running 100 ms into shutdown;/)]);
    await shop.app.close();
  });

  it('drains again after a drain that ended in time: work begun since (a consumer still taking messages) is waited for too', async () => {
    const k = key();
    const first = await instance();
    await first.app.get(IdempotencyModule, { strict: false }).drain(); // nothing running: ends at once
    await leaveAfterTheHandler(first, '/slow', k, 'slow');
    await first.app.close();

    expect(await retryOnTheNextInstance('/slow', k, 'slow')).toEqual({
      status: 201,
      replayed: true,
      json: { run: 1 },
      ranThere: undefined,
    });
  });
});

describe('the hidden argument of a protected handler', () => {
  it('runs the handler unprotected when it is called directly, as in a unit test of the controller', async () => {
    const shop = await bootShop('fastify', { scope: 'shared' });
    try {
      const controller = shop.app.get(ShopController);
      expect(controller.refund('9', { amountCents: 3 })).toEqual({ refund: 1, orderId: '9', amountCents: 3 });
    } finally {
      await shop.app.close();
    }
  });

  it('survives a global pipe that copies every object it is given', async () => {
    const copying = { transform: (value: unknown) => (typeof value === 'object' && value !== null ? { ...value } : value) };
    const shop = await bootShop('express', { scope: 'shared', globalPipes: [copying] });
    try {
      const refund = () =>
        fetch(`${shop.url}/orders/1/refund`, {
          method: 'POST',
          headers: { authorization: 'Bearer t', 'content-type': 'application/json', 'idempotency-key': 'copy-key' },
          body: '{"amountCents":1}',
        });
      const [first, second] = [await refund(), await refund()];
      expect([first.status, second.status, second.headers.get('idempotent-replayed')]).toEqual([201, 201, 'true']);
      expect(shop.runs.count['refund:1']).toBe(1);
    } finally {
      await shop.app.close();
    }
  });

  it('refuses to run unprotected when a global pipe replaced it', async () => {
    const replacing = { transform: (value: unknown) => (typeof value === 'function' ? 'replaced' : value) };
    const shop = await bootShop('express', { scope: 'shared', globalPipes: [replacing] });
    try {
      const response = await fetch(`${shop.url}/orders/1/refund`, {
        method: 'POST',
        headers: { authorization: 'Bearer t', 'content-type': 'application/json', 'idempotency-key': 'pipe-key' },
        body: '{"amountCents":1}',
      });
      expect(response.status).toBe(500);
      expect(shop.runs.count['refund:1']).toBeUndefined();
    } finally {
      await shop.app.close();
    }
  });
});
