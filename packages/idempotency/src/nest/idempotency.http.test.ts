import { randomUUID } from 'node:crypto';
import type { Counter, Histogram } from 'prom-client';
import { BODY_LIMIT, bootFixture, DownStore, ObservedStore, post, type AdapterName, type Fixture, Latch } from './nest.test-support';

const PROBLEM = 'application/problem+json';
const key = () => `k-${randomUUID()}`;

describe.each<AdapterName>(['fastify', 'express'])('@Idempotent over HTTP (%s)', (adapter) => {
  let fixture: Fixture;
  let store: ObservedStore;
  const calls = (route: string) => fixture.state.calls[route] ?? 0;

  beforeAll(async () => {
    store = new ObservedStore();
    fixture = await bootFixture(adapter, { store });
  });
  afterAll(() => fixture.close());
  beforeEach(() => {
    fixture.state.entered = new Latch();
    fixture.state.release = new Latch();
  });

  it('executes once, then replays the same status and byte-identical body', async () => {
    const k = key();
    const before = calls('charge');
    const first = await post(fixture, '/charges', { amountCents: 500 }, { 'idempotency-key': k });
    const replay = await post(fixture, '/charges', { amountCents: 500 }, { 'idempotency-key': k });

    expect(first.status).toBe(201);
    expect(first.json).toEqual({ chargeId: expect.stringMatching(/^ch_\d+$/), amountCents: 500, note: 'ünïcode ✓' });
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect(replay.status).toBe(201);
    expect(replay.text).toBe(first.text);
    expect(replay.headers.get('content-type')).toBe(first.headers.get('content-type'));
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(calls('charge')).toBe(before + 1);
  });

  it('answers 422 key-reused when the key comes back with another body', async () => {
    const k = key();
    const before = calls('charge');
    await post(fixture, '/charges', { amountCents: 500 }, { 'idempotency-key': k });
    const reused = await post(fixture, '/charges', { amountCents: 501 }, { 'idempotency-key': k });

    expect(reused.status).toBe(422);
    expect(reused.headers.get('content-type')).toContain(PROBLEM);
    expect(reused.json).toMatchObject({ type: 'urn:idempotency-chain:problem:key-reused', status: 422, title: expect.any(String) });
    expect(calls('charge')).toBe(before + 1);
  });

  it('runs 20 concurrent duplicates once and answers all of them with the same body', async () => {
    const k = key();
    const before = calls('slow');
    const heldBefore = store.foundHeld;
    const requests = Array.from({ length: 20 }, () => post(fixture, '/slow', { n: 1 }, { 'idempotency-key': k }));
    await fixture.state.entered.promise;
    // The 19 duplicates found the key held, and wait on it: all in one wait.
    await store.changed.until(() => store.foundHeld === heldBefore + 19 && store.waiting === 1);
    fixture.state.release.open();
    const responses = await Promise.all(requests);

    expect(calls('slow')).toBe(before + 1);
    expect(new Set(responses.map((r) => r.status))).toEqual(new Set([201]));
    expect(new Set(responses.map((r) => r.text)).size).toBe(1);
    expect(responses.filter((r) => r.headers.get('idempotent-replayed') === 'true')).toHaveLength(19);
  });

  it("answers a duplicate 409 with Retry-After under inFlight 'reject'", async () => {
    const k = key();
    const first = post(fixture, '/slow-reject', { n: 1 }, { 'idempotency-key': k });
    await fixture.state.entered.promise;
    const duplicate = await post(fixture, '/slow-reject', { n: 1 }, { 'idempotency-key': k });
    fixture.state.release.open();

    expect(duplicate.status).toBe(409);
    expect(duplicate.json).toMatchObject({ type: 'urn:idempotency-chain:problem:in-flight', status: 409 });
    expect(Number(duplicate.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect((await first).status).toBe(201);
  });

  it('answers 409 at once to a duplicate whose caller has no time left (request-timeout-ms: 0)', async () => {
    const k = key();
    const first = post(fixture, '/slow', { n: 2 }, { 'idempotency-key': k });
    await fixture.state.entered.promise;
    const duplicate = await post(fixture, '/slow', { n: 2 }, { 'idempotency-key': k, 'request-timeout-ms': '0' });
    fixture.state.release.open();

    expect(duplicate.status).toBe(409);
    expect(duplicate.headers.get('retry-after')).not.toBeNull();
    expect((await first).status).toBe(201);
  });

  it("refuses a request without a key under keyMode 'required' (400 missing-key)", async () => {
    const before = calls('charge');
    const response = await post(fixture, '/charges', { amountCents: 500 });

    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toContain(PROBLEM);
    expect(response.json).toMatchObject({ type: 'urn:idempotency-chain:problem:missing-key', status: 400 });
    expect(calls('charge')).toBe(before);
  });

  it("keyMode 'fingerprint': identical keyless requests execute once, the second is replayed", async () => {
    const body = { orderId: randomUUID() };
    const before = calls('fingerprint');
    const first = await post(fixture, '/fingerprint', body);
    const second = await post(fixture, '/fingerprint', body);
    const other = await post(fixture, '/fingerprint', { orderId: randomUUID() });

    expect([first.status, second.status, other.status]).toEqual([201, 201, 201]);
    expect(second.text).toBe(first.text);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(calls('fingerprint')).toBe(before + 2);
  });

  it("keyMode 'none': runs every time, even with a key", async () => {
    const k = key();
    const before = calls('none');
    const first = await post(fixture, '/none', {}, { 'idempotency-key': k });
    const second = await post(fixture, '/none', {}, { 'idempotency-key': k });

    expect(second.headers.get('idempotent-replayed')).toBeNull();
    expect(second.json.run).toBe(first.json.run + 1);
    expect(calls('none')).toBe(before + 2);
  });

  it('stores a 422 from the handler and replays it without running the handler again', async () => {
    const k = key();
    const before = calls('unprocessable');
    const first = await post(fixture, '/unprocessable', {}, { 'idempotency-key': k });
    const replay = await post(fixture, '/unprocessable', {}, { 'idempotency-key': k });

    expect(first.status).toBe(422);
    expect(first.headers.get('content-type')).toContain(PROBLEM);
    expect(first.json).toMatchObject({ type: 'about:blank', status: 422, detail: expect.stringContaining('card declined') });
    expect(replay.status).toBe(422);
    expect(replay.text).toBe(first.text);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(calls('unprocessable')).toBe(before + 1);
  });

  it('releases the key after a 503: the retry executes again', async () => {
    const k = key();
    const before = calls('unavailable');
    const first = await post(fixture, '/unavailable', {}, { 'idempotency-key': k });
    const retry = await post(fixture, '/unavailable', {}, { 'idempotency-key': k });

    expect([first.status, retry.status]).toEqual([503, 503]);
    expect(first.json).toMatchObject({ type: 'about:blank', status: 503 });
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
    expect(calls('unavailable')).toBe(before + 2);
  });

  it('releases the key after a thrown Error: 500 without internals, the retry executes again', async () => {
    const k = key();
    const before = calls('crash');
    const first = await post(fixture, '/crash', {}, { 'idempotency-key': k });
    const retry = await post(fixture, '/crash', {}, { 'idempotency-key': k });

    expect([first.status, retry.status]).toEqual([500, 500]);
    expect(first.headers.get('content-type')).toContain(PROBLEM);
    expect(first.json).toMatchObject({ type: 'about:blank', status: 500 });
    expect(first.text).not.toContain('secret');
    expect(calls('crash')).toBe(before + 2);
  });

  describe('refused before the claim: a problem document, no record', () => {
    it.each([
      ['an empty key', ''],
      ['a 256-character key', 'k'.repeat(256)],
      ['a non-ASCII key', 'clé-1'],
      ['a malformed Structured Field string', '"abc'],
    ])('%s is answered 400 invalid-key', async (_name, badKey) => {
      const [before, records] = [calls('charge'), store.size];
      const response = await post(fixture, '/charges', { amountCents: 1 }, { 'idempotency-key': badKey });

      expect(response.status).toBe(400);
      expect(response.headers.get('content-type')).toContain(PROBLEM);
      expect(response.json).toMatchObject({ type: 'urn:idempotency-chain:problem:invalid-key', status: 400 });
      expect(calls('charge')).toBe(before);
      expect(store.size).toBe(records);
    });

    it('accepts a 255-character key, quoted or bare, as the same key', async () => {
      const k = `${key()}-`.padEnd(255, 'x');
      const bare = await post(fixture, '/charges', { amountCents: 7 }, { 'idempotency-key': k });
      const quoted = await post(fixture, '/charges', { amountCents: 7 }, { 'idempotency-key': `"${k}"` });

      expect(bare.status).toBe(201);
      expect(quoted.status).toBe(201);
      expect(quoted.text).toBe(bare.text);
      expect(quoted.headers.get('idempotent-replayed')).toBe('true');
    });

    it('an invalid JSON body is 400; the corrected request with the same key executes', async () => {
      const k = key();
      const before = calls('charge');
      const bad = await post(fixture, '/charges', '{"amountCents": 5', { 'idempotency-key': k });
      const corrected = await post(fixture, '/charges', { amountCents: 5 }, { 'idempotency-key': k });

      expect(bad.status).toBe(400);
      expect(bad.headers.get('content-type')).toContain(PROBLEM);
      expect(bad.json).toMatchObject({ type: 'about:blank', status: 400 });
      expect(corrected.status).toBe(201);
      expect(corrected.headers.get('idempotent-replayed')).toBeNull();
      expect(calls('charge')).toBe(before + 1);
    });

    it('a body over the size limit is 413; the corrected request with the same key executes', async () => {
      const k = key();
      const before = calls('charge');
      const big = await post(fixture, '/charges', { padding: 'x'.repeat(BODY_LIMIT * 2) }, { 'idempotency-key': k });
      const corrected = await post(fixture, '/charges', { amountCents: 5 }, { 'idempotency-key': k });

      expect(big.status).toBe(413);
      expect(big.headers.get('content-type')).toContain(PROBLEM);
      expect(big.json).toMatchObject({ type: 'about:blank', status: 413, title: 'Payload Too Large' });
      expect(corrected.status).toBe(201);
      expect(calls('charge')).toBe(before + 1);
    });

    it('a DTO validation failure is 400 with the messages; the corrected request with the same key executes', async () => {
      const k = key();
      const before = calls('validated');
      const invalid = await post(fixture, '/validated', { orderId: 42, amountCents: -1 }, { 'idempotency-key': k });
      const corrected = await post(fixture, '/validated', { orderId: 'o-1', amountCents: 500 }, { 'idempotency-key': k });

      expect(invalid.status).toBe(400);
      expect(invalid.headers.get('content-type')).toContain(PROBLEM);
      expect(invalid.json).toMatchObject({ type: 'about:blank', status: 400 });
      expect(invalid.json.errors).toEqual(expect.arrayContaining(['orderId must be a string', 'amountCents must be a positive number']));
      expect(corrected.status).toBe(201);
      expect(corrected.json).toEqual({ run: before + 1, orderId: 'o-1', amountCents: 500 });
    });
  });

  it('a waiter whose client disconnects does not stop the shared execution', async () => {
    const k = key();
    const before = calls('slow');
    const abortedBefore = store.abortedWaits;
    const holder = post(fixture, '/slow', { n: 3 }, { 'idempotency-key': k });
    await fixture.state.entered.promise;

    const client = new AbortController();
    const waiter = post(fixture, '/slow', { n: 3 }, { 'idempotency-key': k }, client.signal);
    await store.changed.until(() => store.waiting === 1);
    client.abort();
    await expect(waiter).rejects.toThrow();
    // The server saw the disconnect and stopped that request's wait...
    await store.changed.until(() => store.abortedWaits === abortedBefore + 1);
    // ...while the execution it was waiting for carries on and is stored.
    fixture.state.release.open();
    const held = await holder;
    const retry = await post(fixture, '/slow', { n: 3 }, { 'idempotency-key': k });

    expect(held.status).toBe(201);
    expect(retry.status).toBe(201);
    expect(retry.text).toBe(held.text);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(calls('slow')).toBe(before + 1);
  });

  it('hands the handler its fencing epoch through @IdempotencyExecution()', async () => {
    const response = await post(fixture, '/epoch', {}, { 'idempotency-key': key() });

    expect(response.status).toBe(200);
    expect(response.json.epoch).toBeGreaterThan(0);
    expect(response.json.sameAsCurrent).toBe(true);
  });

  it('counts executions, replays and claim latency in the metrics registry', async () => {
    const events = fixture.registry.getSingleMetric('idempotency_events_total') as Counter;
    const latency = fixture.registry.getSingleMetric('idempotency_claim_duration_seconds') as Histogram;
    const count = async (outcome: string) =>
      (await events.get()).values.find((v) => v.labels.operation === 'test.charge' && v.labels.outcome === outcome)?.value ?? 0;
    const claims = async () =>
      (await latency.get()).values.find((v) => v.metricName?.endsWith('_count') && v.labels.operation === 'test.charge')?.value ?? 0;
    const [executed, replayed, claimed] = [await count('executed'), await count('replayed'), await claims()];

    const k = key();
    for (let i = 0; i < 3; i += 1) await post(fixture, '/charges', { amountCents: 9 }, { 'idempotency-key': k });

    expect(await count('executed')).toBe(executed + 1);
    expect(await count('replayed')).toBe(replayed + 2);
    expect(await claims()).toBe(claimed + 2); // the second replay came from memory: no claim
    expect(await fixture.registry.metrics()).toContain(
      'idempotency_events_total{service="test",operation="test.charge",outcome="executed"}',
    );
  });
});

describe.each<AdapterName>(['fastify', 'express'])('IdempotencyModule options (%s)', (adapter) => {
  it('fails closed when the store is down (503 + Retry-After, handler not run); fail-open runs', async () => {
    const fixture = await bootFixture(adapter, { store: new DownStore() });
    try {
      const closed = await post(fixture, '/charges', { amountCents: 1 }, { 'idempotency-key': key() });
      const open = await post(fixture, '/open', {}, { 'idempotency-key': key() });

      expect(closed.status).toBe(503);
      expect(closed.headers.get('content-type')).toContain(PROBLEM);
      expect(closed.json).toMatchObject({ type: 'urn:idempotency-chain:problem:store-unavailable', status: 503 });
      expect(closed.headers.get('retry-after')).toBe('1');
      expect(fixture.state.calls.charge).toBeUndefined();
      expect(open.status).toBe(201);
      expect(fixture.state.calls.open).toBe(1);
    } finally {
      await fixture.close();
    }
  });

  it('retries a completion whose store write failed once: one charge, and the retry replays the 201', async () => {
    const flaky = new (class extends ObservedStore {
      failures = 1;
      override async complete(recordKey: string, owner: string, result: string, retentionMs: number): Promise<boolean> {
        if (this.failures-- > 0) throw new Error('connect ECONNREFUSED 127.0.0.1:6379');
        return super.complete(recordKey, owner, result, retentionMs);
      }
    })();
    const fixture = await bootFixture(adapter, { store: flaky });
    try {
      const k = key();
      const first = await post(fixture, '/charges', { amountCents: 500 }, { 'idempotency-key': k });
      const retry = await post(fixture, '/charges', { amountCents: 500 }, { 'idempotency-key': k });

      expect(first.status).toBe(201);
      expect(retry.status).toBe(201);
      expect(retry.headers.get('idempotent-replayed')).toBe('true');
      expect(retry.text).toBe(first.text);
      expect(fixture.state.calls.charge).toBe(1);
    } finally {
      await fixture.close();
    }
  });

  it('keeps scopes apart: the same key and body from another tenant executes again', async () => {
    const fixture = await bootFixture(adapter, {
      scope: (ctx) => ctx.switchToHttp().getRequest().headers['x-tenant'],
    });
    try {
      const k = key();
      const a = await post(fixture, '/charges', { amountCents: 1 }, { 'idempotency-key': k, 'x-tenant': 'a' });
      const b = await post(fixture, '/charges', { amountCents: 1 }, { 'idempotency-key': k, 'x-tenant': 'b' });
      const againA = await post(fixture, '/charges', { amountCents: 1 }, { 'idempotency-key': k, 'x-tenant': 'a' });

      expect(b.json.chargeId).not.toBe(a.json.chargeId);
      expect(againA.text).toBe(a.text);
      expect(fixture.state.calls.charge).toBe(2);
    } finally {
      await fixture.close();
    }
  });

  it("lets the module default keyMode be 'optional': a keyless request runs unprotected", async () => {
    const fixture = await bootFixture(adapter, { keyMode: 'optional' });
    try {
      await post(fixture, '/charges', { amountCents: 1 });
      const second = await post(fixture, '/charges', { amountCents: 1 });

      expect(second.status).toBe(201);
      expect(second.headers.get('idempotent-replayed')).toBeNull();
      expect(fixture.state.calls.charge).toBe(2);
    } finally {
      await fixture.close();
    }
  });
});
