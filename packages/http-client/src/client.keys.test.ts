import { hashKey } from '@idempotency-chain/idempotency';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { IdempotentHttpClient } from './client';
import type { IdempotentClientOptions } from './client-options';
import { deriveChildKey } from './derived-key';
import { startClient, type AttemptLog, type FaultServer, type Script } from './fault-server.test-support';
import { currentRequestContext, requestContextFromHeaders, runWithRequestContext } from './request-context';

// Real timers: these tests are about which key travels, not about time. The
// backoff is 1 ms and the attempt timeout generous, so nothing here races a clock.
describe('IdempotentHttpClient: the key belongs to the intent', () => {
  let server: FaultServer;
  let client: IdempotentHttpClient;
  let log: AttemptLog;

  async function setup(script: Script, options: Partial<IdempotentClientOptions> = {}) {
    ({ server, client, log } = await startClient(script, {
      attemptTimeoutMs: 10_000,
      backoff: { initialMs: 1, maxMs: 1 },
      ...options,
    }));
  }

  afterEach(async () => {
    await client.close();
    await server.close();
  });

  // The work happens (ledger), then the reply is lost, twice; the third reply arrives.
  const lostTwice: Script = (_request, index) => (index < 2 ? { drop: true } : { status: 201, body: { charged: true } });

  it('retries a reply lost after the work with the same key: one distinct key under propagated', async () => {
    await setup(lostTwice);
    const response = await client.post('/charges', { amountCents: 500 });

    expect(response).toMatchObject({ status: 201, body: { charged: true }, attempts: 3, replayed: false });
    expect(new Set(server.keys()).size).toBe(1);
    expect(server.keys()[0]).toBe(response.key);
    expect(server.seen.map((r) => r.attempt)).toEqual([1, 2, 3]);
    expect(server.seen.map((r) => r.body)).toEqual(Array(3).fill('{"amountCents":500}'));
    expect(log.events.map((e) => [e.attempt, e.outcome, e.retried])).toEqual([
      [1, 'reset', true],
      [2, 'reset', true],
      [3, 'ok', false],
    ]);
  });

  it('sends one distinct key per attempt under a strategy that mints one per attempt (the bug the lab shows)', async () => {
    await setup(lostTwice, { keyPolicy: { intentKey: () => undefined, attemptKey: () => randomUUID() } });
    await runWithRequestContext({ key: 'inbound' }, () => client.post('/charges', {}));
    expect(new Set(server.keys()).size).toBe(3);
    expect(server.keys()).not.toContain('inbound');
  });

  it('sends no key under none, but still numbers attempts and bounds them (when told to retry unkeyed)', async () => {
    await setup(lostTwice, { keyPolicy: 'none', retryUnkeyed: true });
    await runWithRequestContext({ key: 'inbound' }, () => client.post('/charges', {}));
    expect(server.seen.map((r) => r.headers['idempotency-key'])).toEqual([undefined, undefined, undefined]);
    expect(server.seen.map((r) => r.attempt)).toEqual([1, 2, 3]);
    expect(server.seen.every((r) => r.timeoutMs === 10_000)).toBe(true);
    expect(log.events.every((e) => e.keyHash === undefined)).toBe(true);
  });

  it('reports every attempt with the hashed key, never the raw one', async () => {
    await setup(lostTwice);
    const response = await client.post('/charges', {}, { key: 'raw-secret-key' });
    expect(response.key).toBe('raw-secret-key');
    expect(log.events.map((e) => e.keyHash)).toEqual(Array(3).fill(hashKey('raw-secret-key')));
    expect(JSON.stringify(log.events)).not.toContain('raw-secret-key');
    expect(new Set(log.events.map((e) => e.callId)).size).toBe(1);
  });

  it('propagates the inbound key (when told to forward one no hop identified) and the remaining deadline', async () => {
    await setup(() => ({ status: 200 }), { forwardUnboundKey: true });
    await runWithRequestContext({ key: 'k-in', deadline: Date.now() + 5_000 }, () => client.get('/orders/1'));
    expect(server.seen[0]!.key).toBe('k-in');
    expect(server.seen[0]!.headers['idempotency-key']).toBe('"k-in"');
    expect(server.seen[0]!.timeoutMs).toBeGreaterThan(4_000);
    expect(server.seen[0]!.timeoutMs).toBeLessThanOrEqual(5_000);
  });

  it('does not propagate an invalid inbound key: it mints its own', async () => {
    await setup(() => ({ status: 200 }));
    const context = requestContextFromHeaders({ 'idempotency-key': 'x'.repeat(300) });
    await runWithRequestContext(context, () => client.get('/orders/1'));
    expect(server.seen[0]!.key).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('derives child keys per call name: distinct, and the same again when the parent is retried', async () => {
    await setup(() => ({ status: 201 }), { forwardUnboundKey: true });
    const parent = () =>
      runWithRequestContext({ key: 'order-42' }, () =>
        Promise.all([client.post('/reserve', {}, { callName: 'reserve' }), client.post('/charge', {}, { callName: 'charge' })]),
      );
    await parent();
    await parent(); // the parent's retry
    const [reserve, charge, reserveAgain, chargeAgain] = server.keys();
    expect(reserve).toBe(deriveChildKey('order-42', 'reserve'));
    expect(charge).toBe(deriveChildKey('order-42', 'charge'));
    expect(reserve).not.toBe(charge);
    expect([reserveAgain, chargeAgain]).toEqual([reserve, charge]);
  });

  it('derives the key from business identity when no key is bound', async () => {
    await setup(() => ({ status: 201 }));
    await client.post('/charges', {}, { businessKey: 'order:42:charge', scope: 'account:a' });
    await client.post('/charges', {}, { businessKey: 'order:42:charge', scope: 'account:a' });
    expect(server.keys()[0]).toBe(server.keys()[1]);
    await client.post('/charges', {});
    expect(server.keys()[2]).not.toBe(server.keys()[0]);
  });

  it("never sends two tenants' order 42 under one key: the scope is the call's, and required outside an identified request", async () => {
    await setup(() => ({ status: 201 }));
    await client.post('/charges', {}, { businessKey: 'order:42:charge', scope: 'account:a' });
    await client.post('/charges', {}, { businessKey: 'order:42:charge', scope: 'account:b' });
    expect(new Set(server.keys()).size).toBe(2);
    await expect(runWithRequestContext({}, () => client.post('/charges', {}, { businessKey: 'order:42:charge' }))).rejects.toThrow(
      /needs the caller's `scope`/,
    );
    expect(server.seen).toHaveLength(2); // the refused call sent nothing
  });

  it('refuses to forward an inbound key no hop identified, before sending anything', async () => {
    await setup(() => ({ status: 201 }));
    const call = runWithRequestContext({ key: 'order-1' }, () => client.post('/charges', {}));
    await expect(call).rejects.toThrow(/no @Idempotent route has identified the request/);
    expect(server.seen).toHaveLength(0);
  });

  it('keeps 100 interleaved requests bound to different inbound keys apart', async () => {
    await setup((request) => ({ status: 200, body: { key: request.key } }), { forwardUnboundKey: true });
    const results = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        runWithRequestContext({ key: `inbound-${i}` }, async () => {
          await sleep(i % 5); // interleave across timers
          const [first, second] = await Promise.all([
            client.get<{ key: string }>(`/echo/${i}`),
            client.get<{ key: string }>(`/echo/${i}`, { callName: 'second' }),
          ]);
          return { i, first: first.body.key, second: second.body.key, after: currentRequestContext()?.key };
        }),
      ),
    );
    for (const { i, first, second, after } of results) {
      expect(first).toBe(`inbound-${i}`);
      expect(second).toBe(deriveChildKey(`inbound-${i}`, 'second'));
      expect(after).toBe(`inbound-${i}`);
    }
    for (const request of server.seen) {
      const i = request.path.split('/')[2];
      expect([`inbound-${i}`, deriveChildKey(`inbound-${i}`, 'second')]).toContain(request.key);
    }
    expect(server.seen).toHaveLength(200);
    expect(currentRequestContext()).toBeUndefined();
  });
});
