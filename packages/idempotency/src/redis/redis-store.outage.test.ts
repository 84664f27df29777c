import type { Redis } from 'ioredis';
import { createRedisClient } from './redis-client';
import { RedisStore, redisRecordKey } from './redis-store';
import { startPrivateRedis, type PrivateRedis } from '../../test/support/redis';
import { connect, deleteKeys, newRecordKey, track, uniquePrefix, waitUntil } from './redis.test-support';

/** "Fails fast": far below the 5 s a hanging client would take to be noticed. */
const FAST_MS = 2_000;
const prefix = uniquePrefix();
const claimRequest = (owner = 'owner-a') => ({ recordKey: newRecordKey(), fingerprint: 'fp', owner, leaseMs: 30_000 });

async function rejectsWithin(operation: () => Promise<unknown>): Promise<number> {
  const start = Date.now();
  await expect(operation()).rejects.toThrow();
  return Date.now() - start;
}

describe('RedisStore when Redis goes away', () => {
  let redis: PrivateRedis;
  let client: Redis;
  let store: RedisStore;

  beforeEach(async () => {
    redis = await startPrivateRedis();
    // Closing a client whose server is gone leaves ioredis's own socket-end
    // timer (disconnectTimeout, 2 s by default) running; keep it short so
    // the test file ends promptly. The subscriber inherits it through duplicate().
    client = await connect(redis.url, { disconnectTimeout: 100 });
    store = new RedisStore({ client, prefix, ownsClient: true });
  });

  afterEach(async () => {
    await store.close();
    await redis.stop();
  });

  test('claim, complete, release and renew reject quickly instead of hanging', async () => {
    expect((await store.claim(claimRequest())).status).toBe('claimed');
    await redis.stop();
    const request = claimRequest();
    expect(await rejectsWithin(() => store.claim(request))).toBeLessThan(FAST_MS);
    expect(await rejectsWithin(() => store.complete(request.recordKey, 'owner-a', 'r', 60_000))).toBeLessThan(FAST_MS);
    expect(await rejectsWithin(() => store.release(request.recordKey, 'owner-a'))).toBeLessThan(FAST_MS);
    expect(await rejectsWithin(() => store.renew(request.recordKey, 'owner-a', 30_000))).toBeLessThan(FAST_MS);
  });

  test('a claim in flight when Redis dies rejects quickly', async () => {
    const inFlight = Promise.all(Array.from({ length: 50 }, (_, i) => store.claim(claimRequest(`owner-${i}`))));
    const killed = redis.stop();
    const start = Date.now();
    await inFlight.catch(() => undefined);
    await killed;
    expect(Date.now() - start).toBeLessThan(FAST_MS);
    expect(await rejectsWithin(() => store.claim(claimRequest()))).toBeLessThan(FAST_MS);
  });

  test('waitForChange rejects quickly when its first subscription cannot be made', async () => {
    const request = claimRequest();
    await store.claim(request);
    await redis.stop();
    expect(await rejectsWithin(() => store.waitForChange(request.recordKey, 10_000))).toBeLessThan(FAST_MS);
  });

  test('a waiter whose subscriber loses its connection wakes at once to look again, instead of waiting out its timeout', async () => {
    const polling = new RedisStore({ client, prefix, pollIntervalMs: 60_000 });
    try {
      const request = claimRequest();
      await polling.claim(request);
      // Settled as soon as the connection goes, possibly before the server's stop returns.
      const waiting = polling.waitForChange(request.recordKey, 30_000).then(() => Date.now());
      await waitUntil(
        async () =>
          Number(((await client.pubsub('NUMSUB', `${redisRecordKey(request.recordKey, prefix)}:done`)) as [string, number])[1]) === 1,
      );
      const stoppedAt = Date.now();
      await redis.stop();
      expect((await waiting) - stoppedAt).toBeLessThan(FAST_MS);
      // Looking again is what fails, at once, while Redis is down.
      expect(await rejectsWithin(() => polling.claim(request))).toBeLessThan(FAST_MS);
    } finally {
      await polling.close();
    }
  });

  test('a waiter whose mark Redis refuses (too few replicas to write) keeps waiting, and learns of the completion from its poll', async () => {
    const { recordKey } = claimRequest();
    expect((await store.claim({ recordKey, fingerprint: 'fp', owner: 'owner-a', leaseMs: 30_000 })).status).toBe('claimed');
    const refusedWrites = async () => {
      const line = (await client.info('commandstats')).split('\n').find((l) => l.startsWith('cmdstat_setrange:')) ?? '';
      return Number(/rejected_calls=(\d+)/.exec(line)?.[1] ?? 0) + Number(/failed_calls=(\d+)/.exec(line)?.[1] ?? 0);
    };
    await client.config('SET', 'min-replicas-to-write', '1');
    const waiter = track(store.waitForChange(recordKey, 30_000));
    await waitUntil(async () => (await refusedWrites()) >= 1, 5_000, 'the mark to be refused');
    expect(waiter.settled).toBe(false);
    await client.config('SET', 'min-replicas-to-write', '0');
    // Unmarked, the completion publishes nothing: the waiter's poll (1 s) finds it.
    expect(await store.complete(recordKey, 'owner-a', 'r', 60_000)).toBe(true);
    await expect(waiter.promise).resolves.toBeUndefined();
  });
});

describe("RedisStore and the client's error event", () => {
  // The store listens to the client's errors (a refused login is heard there); ioredis prints an error that has
  // no listener, and an app that added none must still see its Redis go away.
  const unreachable = async (appListener?: () => void) => {
    const client = createRedisClient('redis://127.0.0.1:1', { retryStrategy: () => null });
    if (appListener) client.on('error', appListener);
    const printed = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const store = new RedisStore({ client, prefix, ownsClient: true });
    try {
      await expect(store.connect()).rejects.toThrow();
      return printed.mock.calls.filter(([first]) => first === '[ioredis] Unhandled error event:').length;
    } finally {
      printed.mockRestore();
      await store.close();
    }
  };

  test('prints an error as ioredis would while the store is its only listener', async () => {
    expect(await unreachable()).toBeGreaterThan(0);
  });

  test("leaves it to the app's own listener when there is one", async () => {
    const heard = vi.fn();
    expect(await unreachable(heard)).toBe(0);
    expect(heard).toHaveBeenCalled();
  });
});

describe('RedisStore scripts', () => {
  test('keep working after SCRIPT FLUSH: EVALSHA falls back to EVAL (on a private server)', async () => {
    const redis = await startPrivateRedis();
    const store = new RedisStore({ client: await connect(redis.url), prefix, ownsClient: true });
    try {
      const first = claimRequest();
      expect((await store.claim(first)).status).toBe('claimed');
      const admin = await connect(redis.url);
      await admin.script('FLUSH');
      await admin.quit();
      expect((await store.claim(claimRequest())).status).toBe('claimed');
      expect(await store.complete(first.recordKey, 'owner-a', 'r', 60_000)).toBe(true);
    } finally {
      await store.close();
      await redis.stop();
    }
  });
});

describe('RedisStore.close', () => {
  const counts = () => {
    const resources = process.getActiveResourcesInfo();
    return { sockets: resources.filter((r) => r === 'TCPSocketWrap').length, timers: resources.filter((r) => r === 'Timeout').length };
  };

  test('leaves no open sockets or timers behind, and refuses calls afterwards', async () => {
    const shared = await connect();
    const baseline = counts();
    const client = await connect();
    const store = new RedisStore({ client, prefix, ownsClient: true, pollIntervalMs: 50 });
    const request = claimRequest();
    await store.claim(request);
    const waiters = Array.from({ length: 5 }, () => store.waitForChange(request.recordKey, 10_000));
    await waitUntil(() => counts().sockets >= baseline.sockets + 2, 5000, 'the subscriber to connect');
    await store.close();
    await Promise.all(waiters);
    await waitUntil(
      () => {
        const now = counts();
        return now.sockets === baseline.sockets && now.timers <= baseline.timers;
      },
      5000,
      'sockets and timers to be released',
    );
    expect(client.status).toBe('end');
    await expect(store.claim(request)).rejects.toThrow('closed');
    await deleteKeys(shared, prefix);
    await shared.quit();
  });

  test('does not quit a client it does not own', async () => {
    const client = await connect();
    const store = new RedisStore({ client, prefix });
    await store.waitForChange(newRecordKey(), 1000);
    await store.close();
    expect(await client.ping()).toBe('PONG');
    await client.quit();
  });
});
