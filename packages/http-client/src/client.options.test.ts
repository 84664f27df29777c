import { IdempotentHttpClient } from './client';
import type { IdempotentClientOptions } from './client-options';

/** Node's longest timer: a longer setTimeout fires after 1 ms. */
const NODE_TIMER_LIMIT = 2 ** 31 - 1;

// Construction only: no request is sent, so the client's agent is closed at once.
describe('IdempotentHttpClient: options a timer can keep', () => {
  const baseUrl = 'http://127.0.0.1:9';
  const build = async (options: Partial<IdempotentClientOptions>) => {
    const client = new IdempotentHttpClient({ baseUrl, ...options });
    await client.close();
  };

  const timerOptions: Array<[string, (ms: number) => Partial<IdempotentClientOptions>]> = [
    ['attemptTimeoutMs', (ms) => ({ attemptTimeoutMs: ms })],
    ['backoff.initialMs', (ms) => ({ backoff: { initialMs: ms } })],
    ['backoff.maxMs', (ms) => ({ backoff: { maxMs: ms } })],
    ['backoff.maxRetryAfterMs', (ms) => ({ backoff: { maxRetryAfterMs: ms } })],
  ];
  const outOfRange = [0, -1, Number.NaN, Number.POSITIVE_INFINITY, NODE_TIMER_LIMIT + 1, 2 ** 40];

  describe.each(timerOptions)('%s', (name, options) => {
    it.each(outOfRange)('refuses %s with a RangeError naming the option', async (ms) => {
      await expect(build(options(ms))).rejects.toThrow(RangeError);
      await expect(build(options(ms))).rejects.toThrow(new RegExp(`^${name.replace('.', '\\.')} must be .*<= ${NODE_TIMER_LIMIT}`));
    });

    it.each([0.5, 1, NODE_TIMER_LIMIT])('accepts %s', async (ms) => {
      await expect(build(options(ms))).resolves.toBeUndefined();
    });
  });

  it('refuses a value of the wrong type, as the untyped callers of JavaScript may pass', async () => {
    await expect(build({ backoff: { maxMs: '2000' as unknown as number } })).rejects.toThrow(/backoff\.maxMs/);
  });

  it('keeps its other checks', async () => {
    await expect(build({ maxAttempts: 0 })).rejects.toThrow(/maxAttempts/);
    await expect(build({ deadlineMs: 0 })).rejects.toThrow(/deadlineMs/);
  });
});
