import diagnostics from 'node:diagnostics_channel';
import type { Redis } from 'ioredis';
import { RedisStore, redisRecordKey } from './redis-store';
import { connect, deleteKeys, newRecordKey, readRecord, track, uniquePrefix, waitUntil } from './redis.test-support';

const prefix = uniquePrefix();
const LEASE_MS = 30_000;
/** Long enough that a waiter resolving early was woken, not timed out. */
const WAIT_MS = 10_000;
/** Well under WAIT_MS, generous for a loaded CI machine. */
const PROMPTLY_MS = 3_000;
let client: Redis;
/** Polls so rarely that only a message, or the post-subscribe check, wakes a waiter. */
let store: RedisStore;

beforeAll(async () => {
  client = await connect();
  store = new RedisStore({ client, prefix, pollIntervalMs: 60_000 });
});

afterAll(async () => {
  await store.close();
  await deleteKeys(client, prefix);
  await client.quit();
});

const channel = (recordKey: string) => `${redisRecordKey(recordKey, prefix)}:done`;
const subscribers = async (recordKey: string) => {
  const [, count] = (await client.pubsub('NUMSUB', channel(recordKey))) as [string, number];
  return Number(count);
};
const subscribed = (recordKey: string, expected = 1) =>
  waitUntil(async () => (await subscribers(recordKey)) === expected, 5000, 'the subscription');
async function claimed(recordKey: string, owner = 'owner-a', leaseMs = LEASE_MS): Promise<void> {
  const result = await store.claim({ recordKey, fingerprint: 'fp', owner, leaseMs });
  expect(result.status).toBe('claimed');
}
async function elapsed(promise: Promise<unknown>): Promise<number> {
  const start = Date.now();
  await promise;
  return Date.now() - start;
}

describe('RedisStore.waitForChange', () => {
  test.each(['complete', 'release'] as const)('a waiter is woken by %s, not before it and long before its timeout', async (how) => {
    const recordKey = newRecordKey();
    await claimed(recordKey);
    const waiter = track(store.waitForChange(recordKey, WAIT_MS));
    await subscribed(recordKey);
    expect(waiter.settled).toBe(false);
    const start = Date.now();
    const changed =
      how === 'complete' ? await store.complete(recordKey, 'owner-a', 'r', 60_000) : await store.release(recordKey, 'owner-a');
    expect(changed).toBe(true);
    await waiter.promise;
    expect(Date.now() - start).toBeLessThan(PROMPTLY_MS);
    await subscribed(recordKey, 0);
  });

  test('a waiter started just before the completion still resolves promptly (subscribe race)', async () => {
    const recordKey = newRecordKey();
    await claimed(recordKey);
    const waiting = store.waitForChange(recordKey, WAIT_MS);
    await store.complete(recordKey, 'owner-a', 'r', 60_000);
    expect(await elapsed(waiting)).toBeLessThan(PROMPTLY_MS);
  });

  test('a waiter on a record that already completed, or is absent, resolves at once after subscribing', async () => {
    const done = newRecordKey();
    await claimed(done);
    await store.complete(done, 'owner-a', 'r', 60_000);
    expect(await elapsed(store.waitForChange(done, WAIT_MS))).toBeLessThan(PROMPTLY_MS);
    expect(await elapsed(store.waitForChange(newRecordKey(), WAIT_MS))).toBeLessThan(PROMPTLY_MS);
  });

  test('resolves when the signal aborts, and at once for a signal already aborted', async () => {
    const recordKey = newRecordKey();
    await claimed(recordKey);
    const controller = new AbortController();
    const waiter = track(store.waitForChange(recordKey, WAIT_MS, controller.signal));
    await subscribed(recordKey);
    expect(waiter.settled).toBe(false);
    controller.abort();
    expect(await elapsed(waiter.promise)).toBeLessThan(PROMPTLY_MS);
    await expect(store.waitForChange(recordKey, WAIT_MS, AbortSignal.abort())).resolves.toBeUndefined();
    await subscribed(recordKey, 0);
    expect((await readRecord(client, redisRecordKey(recordKey, prefix)))?.status).toBe('in_progress');
  });

  test('resolves, without rejecting, when the timeout passes first', async () => {
    const recordKey = newRecordKey();
    await claimed(recordKey);
    const took = await elapsed(store.waitForChange(recordKey, 200));
    expect(took).toBeGreaterThanOrEqual(190);
    expect(took).toBeLessThan(PROMPTLY_MS);
    await subscribed(recordKey, 0);
  });

  test("the re-check safety net wakes a waiter whose holder's lease expired silently", async () => {
    const polling = new RedisStore({ client, prefix, pollIntervalMs: 100 });
    try {
      const recordKey = newRecordKey();
      await claimed(recordKey, 'crashed', 300);
      const took = await elapsed(polling.waitForChange(recordKey, WAIT_MS));
      expect(took).toBeLessThan(PROMPTLY_MS);
      expect(await client.exists(redisRecordKey(recordKey, prefix))).toBe(0);
    } finally {
      await polling.close();
    }
  });

  test('100 waiters on one key share one SUBSCRIBE, unsubscribed when the last leaves', async () => {
    const recordKey = newRecordKey();
    await claimed(recordKey);
    let subscribes = 0;
    const count = (message: unknown) => {
      const { command, args } = message as { command: string; args: string[] };
      if (command === 'subscribe' && args.includes(channel(recordKey))) subscribes += 1;
    };
    diagnostics.subscribe('tracing:ioredis:command:start', count);
    try {
      const waiters = Array.from({ length: 100 }, () => track(store.waitForChange(recordKey, WAIT_MS)));
      await subscribed(recordKey);
      expect(waiters.some((w) => w.settled)).toBe(false);
      await store.complete(recordKey, 'owner-a', 'r', 60_000);
      expect(await elapsed(Promise.all(waiters.map((w) => w.promise)))).toBeLessThan(PROMPTLY_MS);
      expect(subscribes).toBe(1);
      await subscribed(recordKey, 0);
    } finally {
      diagnostics.unsubscribe('tracing:ioredis:command:start', count);
    }
  });

  test('works over RESP2 and with a client keyPrefix (channels are not prefixed, keys are)', async () => {
    const prefixed = await connect(undefined, { protocol: 2, keyPrefix: `${prefix}kp:` });
    const resp2 = new RedisStore({ client: prefixed, prefix: 'idem:', pollIntervalMs: 60_000, ownsClient: true });
    try {
      const recordKey = newRecordKey();
      expect((await resp2.claim({ recordKey, fingerprint: 'fp', owner: 'owner-a', leaseMs: LEASE_MS })).status).toBe('claimed');
      expect(await client.exists(`${prefix}kp:${redisRecordKey(recordKey)}`)).toBe(1);
      const waiter = track(resp2.waitForChange(recordKey, WAIT_MS));
      await waitUntil(
        async () => Number(((await client.pubsub('NUMSUB', `${redisRecordKey(recordKey)}:done`)) as [string, number])[1]) === 1,
      );
      expect(waiter.settled).toBe(false);
      expect(await resp2.complete(recordKey, 'owner-a', 'r', 60_000)).toBe(true);
      expect(await elapsed(waiter.promise)).toBeLessThan(PROMPTLY_MS);
    } finally {
      await resp2.close();
    }
  });

  test('close() resolves pending waiters and closes the subscriber it created', async () => {
    const closing = new RedisStore({ client, prefix, pollIntervalMs: 60_000 });
    const recordKey = newRecordKey();
    await claimed(recordKey);
    const waiter = track(closing.waitForChange(recordKey, WAIT_MS));
    await subscribed(recordKey);
    await closing.close();
    expect(await elapsed(waiter.promise)).toBeLessThan(PROMPTLY_MS);
    await subscribed(recordKey, 0);
    await expect(closing.waitForChange(recordKey, WAIT_MS)).rejects.toThrow('closed');
    expect(await client.ping()).toBe('PONG');
  });
});
