import { IdempotentHttpClient } from './client';
import type { IdempotentClientOptions } from './client-options';
import { isHttpCallError, RetriesExhaustedError } from './errors';
import { FAKE_TIMERS, reply, startClient, type AttemptLog, type FaultServer, settle, type Script } from './fault-server.test-support';

// Fake timers: every wait between attempts is advanced by hand, by exactly the
// wait the client announced, after the attempt has really finished over HTTP.
describe('IdempotentHttpClient: retries only unknown outcomes', () => {
  let server: FaultServer;
  let client: IdempotentHttpClient;
  let log: AttemptLog;

  async function setup(script: Script, options: Partial<IdempotentClientOptions> = {}) {
    ({ server, client, log } = await startClient(script, options));
  }

  beforeEach(() => vi.useFakeTimers(FAKE_TIMERS));
  afterEach(async () => {
    vi.useRealTimers();
    await client.close();
    await server.close();
  });

  it('returns a 422 as a response, after one attempt', async () => {
    const problem = { type: 'urn:idempotency-chain:problem:key-reused', status: 422 };
    await setup(() => ({ status: 422, headers: { 'content-type': 'application/problem+json' }, body: JSON.stringify(problem) }));
    const response = await settle(client.post('/charges', {}), log);
    expect(response).toMatchObject({ status: 422, body: problem, attempts: 1 });
    expect(server.seen).toHaveLength(1);
    expect(log.events).toMatchObject([{ attempt: 1, outcome: 'http-error', status: 422, retried: false }]);
  });

  it.each([400, 401, 403, 404, 500])('never retries %i', async (status) => {
    await setup(() => ({ status }));
    expect(await settle(client.get('/x'), log)).toMatchObject({ status, attempts: 1 });
  });

  it('waits what a 409 Retry-After says, not the backoff', async () => {
    await setup((_request, index) => (index === 0 ? reply(409, { 'retry-after': '1' }) : reply(201, { 'idempotent-replayed': 'true' })));
    const call = client.post('/charges', {}, { key: 'k' });
    await log.reached(1);
    expect(log.events[0]).toMatchObject({ outcome: 'http-error', status: 409, retried: true, waitMs: 1000 });

    await vi.advanceTimersByTimeAsync(999);
    expect(server.seen).toHaveLength(1); // the backoff (≤ 2 s, often ~100 ms) would have fired by now
    await vi.advanceTimersByTimeAsync(1);
    const response = await call;

    const [first, second] = log.events;
    expect(second!.startedAt - (first!.startedAt + first!.durationMs)).toBe(1000);
    expect(response).toMatchObject({ status: 201, attempts: 2, replayed: true, key: 'k' });
    expect(second).toMatchObject({ outcome: 'ok', replayed: true, retried: false });
    expect(server.keys()).toEqual(['k', 'k']);
  });

  it('never retries a genuine 409 Conflict: it is the answer, after one attempt', async () => {
    const conflict = { type: 'https://api.example.com/problems/version-conflict', status: 409 };
    await setup(() => reply(409, { 'content-type': 'application/problem+json' }, JSON.stringify(conflict)));
    const response = await settle(client.post('/charges', {}, { key: 'k' }), log);
    expect(response).toMatchObject({ status: 409, body: conflict, attempts: 1 });
    expect(server.seen).toHaveLength(1);
  });

  it('retries the idempotency in-flight 409 by its problem type, even with its Retry-After stripped', async () => {
    const inFlight = { type: 'urn:idempotency-chain:problem:in-flight', status: 409 };
    await setup((_request, index) =>
      index === 0
        ? reply(409, { 'content-type': 'application/problem+json' }, JSON.stringify(inFlight))
        : reply(201, { 'idempotent-replayed': 'true' }),
    );
    const response = await settle(client.post('/charges', {}, { key: 'k' }), log);
    expect(response).toMatchObject({ status: 201, attempts: 2, replayed: true });
    expect(server.keys()).toEqual(['k', 'k']);
  });

  it.each([408, 425, 429])('retries a %i, after the Retry-After it sends, with the same key', async (status) => {
    await setup((_request, index) => (index === 0 ? reply(status, { 'retry-after': '2' }) : reply(201)));
    const call = client.post('/charges', {}, { key: 'k' });
    await log.reached(1);
    expect(log.events[0]).toMatchObject({ outcome: 'http-error', status, retried: true, waitMs: 2000 });
    await vi.advanceTimersByTimeAsync(2000);
    expect(await call).toMatchObject({ status: 201, attempts: 2 });
    expect(server.keys()).toEqual(['k', 'k']);
  });

  it('retries 502/503/504 with capped, jittered backoff, then gives up at the attempt cap', async () => {
    const statuses = [502, 504, 503];
    await setup((_request, index) => ({ status: statuses[index % 3]!, body: { index } }), {
      maxAttempts: 3,
      backoff: { initialMs: 100, maxMs: 250 },
    });
    const error = (await settle(client.post('/charges', {}), log).catch((e: unknown) => e)) as RetriesExhaustedError;

    expect(isHttpCallError(error, RetriesExhaustedError)).toBe(true);
    expect(error).toMatchObject({ limit: 'attempts', attempts: 3, lastStatus: 503, lastResponse: { body: { index: 2 } } });
    expect(error.message).toMatch(/attempt limit/);
    expect(server.seen.map((r) => r.attempt)).toEqual([1, 2, 3]);
    expect(log.events.map((e) => e.retried)).toEqual([true, true, false]);
    for (const event of log.events.slice(0, 2)) {
      expect(event.waitMs).toBeGreaterThanOrEqual(0);
      expect(event.waitMs).toBeLessThanOrEqual(250);
    }
  });

  it('retries a timed-out attempt with the same key, then answers', async () => {
    await setup((_request, index) => (index === 0 ? { hang: true } : { status: 200 }), { attemptTimeoutMs: 500 });
    const call = client.get('/slow');
    await server.received(1);
    await vi.advanceTimersByTimeAsync(500); // the attempt timeout fires
    const response = await settle(call, log);

    expect(response).toMatchObject({ status: 200, attempts: 2 });
    expect(log.events.map((e) => e.outcome)).toEqual(['timeout', 'ok']);
    expect(log.events[0]!.durationMs).toBe(500);
    expect(new Set(server.keys()).size).toBe(1);
    expect(server.seen.map((r) => r.timeoutMs)).toEqual([500, 500]);
  });

  it('retries a refused connection, and says so when nothing ever listens', async () => {
    await setup(() => ({ status: 200 }));
    const { url } = server;
    await server.close();
    const lonely = new IdempotentHttpClient({ baseUrl: url, onAttempt: log.listener, maxAttempts: 2 });
    const error = await settle(lonely.get('/x'), log).catch((e: unknown) => e);
    await lonely.close();
    expect(error).toMatchObject({ name: 'RetriesExhaustedError', lastOutcome: 'refused', attempts: 2 });
    expect(log.events.map((e) => e.outcome)).toEqual(['refused', 'refused']);
  });
});
