import type { IdempotentHttpClient } from './client';
import type { IdempotentClientOptions } from './client-options';
import { isHttpCallError, OutcomeUnknownError } from './errors';
import { FAKE_TIMERS, reply, settle, startClient, type AttemptLog, type FaultServer, type Script } from './fault-server.test-support';
import type { KeyStrategy } from './key-policy';

// The reply to the first request is lost after the server did the work: a
// retry without a key would do it again.
const lostOnce: Script = (_request, index) => (index === 0 ? { drop: true } : reply(201, {}, { done: true }));
const NO_KEY_STRATEGY: KeyStrategy = { intentKey: () => undefined, attemptKey: () => undefined };

describe('IdempotentHttpClient: an unsafe method without a key is not retried', () => {
  let server: FaultServer;
  let client: IdempotentHttpClient;
  let log: AttemptLog;

  async function setup(script: Script, options: Partial<IdempotentClientOptions> = {}) {
    ({ server, client, log } = await startClient(script, { backoff: { initialMs: 1, maxMs: 1 }, ...options }));
  }

  beforeEach(() => vi.useFakeTimers(FAKE_TIMERS));
  afterEach(async () => {
    vi.useRealTimers();
    await client.close();
    await server.close();
  });

  it.each([
    ['none', 'none' as const],
    ['a strategy that returns none', NO_KEY_STRATEGY],
  ])('POST under %s: a lost reply ends the call, the server saw one attempt', async (_name, keyPolicy) => {
    await setup(lostOnce, { keyPolicy });
    const error = (await settle(client.post('/charges', {}), log).catch((e: unknown) => e)) as OutcomeUnknownError;

    expect(isHttpCallError(error, OutcomeUnknownError)).toBe(true);
    expect(error).toMatchObject({ limit: 'no-key', attempts: 1, lastOutcome: 'reset' });
    expect(error.message).toMatch(/POST \/charges: no retry of an unsafe method sent without an Idempotency-Key/);
    expect(server.seen).toHaveLength(1);
    expect(log.events).toMatchObject([{ outcome: 'reset', retried: false }]);
  });

  it('PATCH without a key: a timed-out attempt is not retried either', async () => {
    await setup((_request, index) => (index === 0 ? { hang: true } : reply(200)), { keyPolicy: 'none', attemptTimeoutMs: 500 });
    const call = client.request({ method: 'PATCH', path: '/orders/1', body: {} }).catch((e: unknown) => e);
    await server.received(1);
    await vi.advanceTimersByTimeAsync(500);
    expect(await call).toMatchObject({ name: 'OutcomeUnknownError', attempts: 1, lastOutcome: 'timeout' });
    expect(server.seen).toHaveLength(1);
  });

  it('POST without a key: a 503 is not retried, and says so', async () => {
    await setup((_request, index) => (index === 0 ? reply(503) : reply(201)), { keyPolicy: 'none' });
    const error = await settle(client.post('/charges', {}), log).catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'OutcomeUnknownError', attempts: 1, lastStatus: 503 });
    expect(server.seen).toHaveLength(1);
  });

  it('retries it when told to (retryUnkeyed): the server saw two attempts', async () => {
    await setup(lostOnce, { keyPolicy: 'none', retryUnkeyed: true });
    const response = await settle(client.post('/charges', {}), log);
    expect(response).toMatchObject({ status: 201, attempts: 2 });
    expect(server.seen).toHaveLength(2);
  });

  it('retries a keyed POST as ever', async () => {
    await setup(lostOnce);
    expect(await settle(client.post('/charges', {}, { key: 'k' }), log)).toMatchObject({ status: 201, attempts: 2 });
    expect(server.keys()).toEqual(['k', 'k']);
  });

  it.each(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE'])('retries an idempotent %s without a key (RFC 9110)', async (method) => {
    await setup(lostOnce, { keyPolicy: 'none' });
    expect(await settle(client.request({ method, path: '/orders/1' }), log)).toMatchObject({ status: 201, attempts: 2 });
  });

  it('retries a refused connection without a key: the request never reached a server', async () => {
    await setup(() => reply(201));
    const { url } = server;
    await server.close();
    await client.close();
    ({ server, client, log } = await startClient(() => reply(201), { baseUrl: url, keyPolicy: 'none', maxAttempts: 2 }));
    const error = await settle(client.post('/charges', {}), log).catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'RetriesExhaustedError', lastOutcome: 'refused', attempts: 2 });
  });
});
