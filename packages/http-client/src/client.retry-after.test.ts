import type { IdempotentHttpClient } from './client';
import type { IdempotentClientOptions } from './client-options';
import type { HttpCallError } from './errors';
import { FAKE_TIMERS, reply, startClient, type AttemptLog, type FaultServer, type Script } from './fault-server.test-support';
import { runWithRequestContext } from './request-context';

/** Node's longest timer: a longer setTimeout fires after 1 ms. */
const NODE_TIMER_LIMIT = 2 ** 31 - 1;

// Fake timers: a wait that is slept shows as fake time passing; a call that
// ends "at once" ends with the clock where it started.
describe('IdempotentHttpClient: a Retry-After is honoured only when it leads somewhere', () => {
  let server: FaultServer;
  let client: IdempotentHttpClient;
  let log: AttemptLog;

  async function setup(script: Script, options: Partial<IdempotentClientOptions> = {}) {
    ({ server, client, log } = await startClient(script, options));
  }
  const failure = (call: Promise<unknown>) =>
    call.then(
      () => Promise.reject(new Error('expected the call to fail')),
      (error: unknown) => error as HttpCallError,
    );

  // A whole second, so an HTTP-date (whole seconds) an hour ahead is exactly 3 600 000 ms ahead.
  beforeEach(() => vi.useFakeTimers({ ...FAKE_TIMERS, now: Date.UTC(2025, 0, 1) }));
  afterEach(async () => {
    vi.restoreAllMocks(); // first: the setTimeout spy wraps the fake timer
    vi.useRealTimers();
    await client.close();
    await server.close();
  });

  it.each([
    ['503, delay-seconds', 503, () => '3600'],
    ['409 in flight, HTTP-date', 409, () => new Date(Date.now() + 3_600_000).toUTCString()],
    ['429 shedding load, delay-seconds', 429, () => '3600'],
  ])('ends the call at once when the server asks for an hour (%s): more than the 30 s default', async (_, status, after) => {
    await setup(() => reply(status, { 'retry-after': after() }, { busy: true }), { maxAttempts: 5 });
    const start = Date.now();
    const error = await failure(client.post('/charges', {}));

    expect(error).toMatchObject({ name: 'RetriesExhaustedError', limit: 'attempts', attempts: 1, lastStatus: status });
    expect(error.lastResponse).toMatchObject({ status, body: { busy: true }, headers: { 'retry-after': after() } });
    expect(error.message).toMatch(/Retry-After of 3600000 ms \(more than backoff\.maxRetryAfterMs, 30000 ms\)/);
    expect(Date.now()).toBe(start); // no fake time passed: nothing was slept
    expect(log.events).toEqual([expect.objectContaining({ status, retried: false })]);
    expect(log.events[0]).not.toHaveProperty('waitMs');
    expect(server.seen).toHaveLength(1);
  });

  it('honours a Retry-After up to backoff.maxRetryAfterMs, bound included', async () => {
    await setup((_request, index) => (index === 0 ? reply(409, { 'retry-after': '5' }) : reply(201)), {
      backoff: { maxRetryAfterMs: 5000 },
    });
    const call = client.post('/charges', {});
    await log.reached(1);
    expect(log.events[0]).toMatchObject({ retried: true, waitMs: 5000 });
    await vi.advanceTimersByTimeAsync(5000);
    expect(await call).toMatchObject({ status: 201, attempts: 2 });
  });

  it('refuses one second more than backoff.maxRetryAfterMs', async () => {
    await setup(() => reply(409, { 'retry-after': '6' }), { backoff: { maxRetryAfterMs: 5000 } });
    const error = await failure(client.post('/charges', {}));
    expect(error).toMatchObject({ name: 'RetriesExhaustedError', attempts: 1, lastStatus: 409 });
    expect(log.events).toMatchObject([{ retried: false }]);
  });

  it('names the cap, not the deadline, when both forbid the wait', async () => {
    await setup(() => reply(503, { 'retry-after': '3600' }), { deadlineMs: 1500 });
    const error = await failure(client.post('/charges', {}));
    expect(error).toMatchObject({ name: 'RetriesExhaustedError', limit: 'attempts', lastStatus: 503 });
  });

  it('names the inbound deadline when only it forbids a Retry-After under the cap', async () => {
    await setup(() => reply(409, { 'retry-after': '5' }));
    const start = Date.now();
    const error = await failure(runWithRequestContext({ deadline: start + 2000 }, () => client.post('/charges', {})));
    expect(error).toMatchObject({ name: 'DeadlineExceededError', limit: 'inbound-deadline', attempts: 1, lastStatus: 409 });
    expect(Date.now()).toBe(start);
    expect(log.events).toMatchObject([{ status: 409, retried: false }]);
  });

  it("never hands setTimeout more than Node's longest timer, which would fire after 1 ms", async () => {
    const timers = vi.spyOn(globalThis, 'setTimeout');
    // 2 147 484 s is just past the limit; before the cap existed this retried 1 ms later.
    await setup(() => reply(503, { 'retry-after': '2147484' }), { backoff: { maxRetryAfterMs: NODE_TIMER_LIMIT } });
    const call = failure(client.get('/x'));
    await vi.advanceTimersByTimeAsync(1);
    const error = await call;

    expect(error).toMatchObject({ name: 'RetriesExhaustedError', attempts: 1 });
    expect(server.seen).toHaveLength(1);
    const delays = timers.mock.calls.map(([, ms]) => ms ?? 0);
    expect(Math.max(...delays)).toBeLessThanOrEqual(NODE_TIMER_LIMIT);
  });

  it('sleeps a Retry-After at the timer limit for its whole length, not 1 ms', async () => {
    await setup((_request, index) => (index === 0 ? reply(503, { 'retry-after': '2147483' }) : reply(200)), {
      backoff: { maxRetryAfterMs: NODE_TIMER_LIMIT },
    });
    const call = client.get('/x');
    await log.reached(1);
    expect(log.events[0]).toMatchObject({ retried: true, waitMs: 2_147_483_000 });
    await vi.advanceTimersByTimeAsync(2_147_483_000);
    expect(await call).toMatchObject({ status: 200, attempts: 2 });

    // An overflowing timer would have fired 1 ms into the advance.
    const [first, second] = log.events;
    expect(second!.startedAt - (first!.startedAt + first!.durationMs)).toBe(2_147_483_000);
  });

  it('keeps the limits it was built with when the options object changes later', async () => {
    const backoff = { maxRetryAfterMs: 5000 };
    await setup(() => reply(503, { 'retry-after': '60' }), { backoff });
    backoff.maxRetryAfterMs = NODE_TIMER_LIMIT * 10;
    const error = await failure(client.get('/x'));
    expect(error).toMatchObject({ name: 'RetriesExhaustedError', attempts: 1 });
    expect(error.message).toMatch(/backoff\.maxRetryAfterMs, 5000 ms/);
  });
});
