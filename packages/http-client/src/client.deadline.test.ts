import type { IdempotentHttpClient } from './client';
import type { IdempotentClientOptions } from './client-options';
import { DeadlineExceededError, isHttpCallError } from './errors';
import { FAKE_TIMERS, reply, startClient, type AttemptLog, type FaultServer, type Script } from './fault-server.test-support';
import { runWithRequestContext } from './request-context';

// Fake timers: the clock only moves when the test moves it, and only once the
// real HTTP exchange it depends on has happened.
describe('IdempotentHttpClient: no retry outlives the deadline', () => {
  let server: FaultServer;
  let client: IdempotentHttpClient;
  let log: AttemptLog;

  async function setup(script: Script, options: Partial<IdempotentClientOptions> = {}) {
    ({ server, client, log } = await startClient(script, options));
  }

  beforeEach(() => vi.useFakeTimers(FAKE_TIMERS));
  afterEach(async () => {
    vi.useRealTimers();
    vi.restoreAllMocks();
    await client.close();
    await server.close();
  });

  it('starts no attempt after the overall deadline, clips the last one to it, and says so', async () => {
    await setup(() => ({ hang: true }), {
      deadlineMs: 1000,
      attemptTimeoutMs: 400,
      maxAttempts: 10,
      backoff: { initialMs: 100, maxMs: 100 },
    });
    const start = Date.now();
    const call = client.get('/slow').then(
      () => Promise.reject(new Error('expected the deadline to end the call')),
      (error: unknown) => error as DeadlineExceededError,
    );
    for (let n = 1; ; n++) {
      await server.received(n); // attempt n is on the wire
      await vi.advanceTimersByTimeAsync(server.seen[n - 1]!.timeoutMs!); // ...and times out
      await log.reached(n);
      const event = log.events[n - 1]!;
      if (!event.retried) break;
      await vi.advanceTimersByTimeAsync(event.waitMs!);
    }
    const error = await call;

    expect(isHttpCallError(error, DeadlineExceededError)).toBe(true);
    expect(error.limit).toBe('deadline');
    expect(error.message).toMatch(/overall deadline/);
    expect(log.events.length).toBeGreaterThanOrEqual(2);
    for (const [i, event] of log.events.entries()) {
      expect(event.startedAt).toBeLessThan(start + 1000);
      // Each attempt told the server how long it would wait: the attempt timeout, clipped to the deadline.
      expect(server.seen[i]!.timeoutMs).toBe(Math.min(400, start + 1000 - event.startedAt));
    }
    expect(Date.now()).toBeLessThanOrEqual(start + 1000);
    expect(['deadline', 'timeout']).toContain(log.events.at(-1)!.outcome);
  });

  it('holds the inbound deadline too, and names it', async () => {
    await setup(() => ({ hang: true }), { deadlineMs: 10_000, attemptTimeoutMs: 2000 });
    const start = Date.now();
    const call = runWithRequestContext({ deadline: start + 300 }, () => client.get('/slow')).then(
      () => Promise.reject(new Error('expected the deadline to end the call')),
      (error: unknown) => error as DeadlineExceededError,
    );
    await server.received(1);
    expect(server.seen[0]!.timeoutMs).toBe(300);
    await vi.advanceTimersByTimeAsync(300);
    const error = await call;

    expect(error).toMatchObject({ name: 'DeadlineExceededError', limit: 'inbound-deadline', attempts: 1, lastOutcome: 'deadline' });
    expect(error.message).toMatch(/inbound deadline/);
    expect(log.events).toMatchObject([{ outcome: 'deadline', retried: false, durationMs: 300 }]);
  });

  it('stops at once when Retry-After would outlive the deadline, without waiting', async () => {
    await setup(() => reply(409, { 'retry-after': '5' }), { deadlineMs: 1500 });
    const start = Date.now();
    const error = (await client.post('/charges', {}).catch((e: unknown) => e)) as DeadlineExceededError;

    expect(error).toMatchObject({ limit: 'deadline', attempts: 1, lastStatus: 409 });
    expect(Date.now()).toBe(start); // no fake time passed: it did not sleep towards the deadline
    expect(log.events).toMatchObject([{ status: 409, retried: false }]);
    expect(server.seen).toHaveLength(1);
  });

  it('stops at once when the backoff would outlive the deadline', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0.5); // first jittered wait ≈ 0.9 × initialMs
    await setup(() => ({ status: 503 }), { deadlineMs: 1000, backoff: { initialMs: 5000, maxMs: 5000 } });
    const error = (await client.get('/x').catch((e: unknown) => e)) as DeadlineExceededError;
    expect(error).toMatchObject({ limit: 'deadline', attempts: 1, lastStatus: 503 });
    expect(server.seen).toHaveLength(1);
  });

  it('makes no attempt at all when the inbound deadline has already passed', async () => {
    await setup(() => ({ status: 200 }));
    const error = await runWithRequestContext({ deadline: Date.now() - 1 }, () => client.get('/x')).catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'DeadlineExceededError', limit: 'inbound-deadline', attempts: 0 });
    expect(server.seen).toHaveLength(0);
    expect(log.events).toHaveLength(0);
  });
});
