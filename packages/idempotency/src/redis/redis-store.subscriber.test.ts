import type { Redis } from 'ioredis';
import { latch, within } from '../../test/support/async';
import { startPrivateRedis, type PrivateRedis } from '../../test/support/redis';
import { IdempotencyCoordinator, type RunRequest } from '../coordinator';
import { RedisStore, redisRecordKey } from './redis-store';
import { connect, uniquePrefix, waitUntil } from './redis.test-support';

const prefix = uniquePrefix();
const OPERATION = 'payments.charge';
/** Ten held keys, two waiters each. */
const KEYS = Array.from({ length: 10 }, (_, i) => `key-${i}`);
const request = (key: string, signal?: AbortSignal): RunRequest => ({ operation: OPERATION, key, fingerprint: 'fp', signal });

/**
 * Only the subscriber connection is cut (`CLIENT KILL TYPE pubsub`), on a
 * server of the test's own: Redis stays up, so the holders complete, and
 * nothing but a lost signal could fail the waiters.
 */
describe('RedisStore when only its subscriber connection is lost', () => {
  let redis: PrivateRedis;
  let admin: Redis;
  let store: RedisStore;
  let coordinator: IdempotencyCoordinator;

  beforeEach(async () => {
    redis = await startPrivateRedis();
    admin = await connect(redis.url);
    // The poll never rescues a waiter within a test: only the signal, or looking again, can.
    store = new RedisStore({ client: await connect(redis.url), prefix, pollIntervalMs: 600_000, ownsClient: true });
    coordinator = new IdempotencyCoordinator({
      service: 'payments',
      store,
      replayCache: false,
      defaults: { leaseMs: 60_000, maxWaitMs: 60_000 },
    });
  });

  afterEach(async () => {
    await store.close();
    await admin.quit();
    await redis.stop();
  });

  const channelOf = (key: string) => `${redisRecordKey(coordinator.recordKey(OPERATION, '', key), prefix)}:done`;
  const subscribers = async (keys: string[]) => {
    const reply = (await admin.pubsub('NUMSUB', ...keys.map(channelOf))) as Array<string | number>;
    return reply.filter((_, i) => i % 2 === 1).map(Number);
  };
  const allSubscribed = (keys: string[]) =>
    waitUntil(async () => (await subscribers(keys)).every((n) => n === 1), 10_000, 'every channel subscribed');
  const channelsLeft = async () => ((await admin.pubsub('CHANNELS', `${prefix}*`)) as string[]).length;
  const killSubscriber = async () => expect(Number(await admin.call('CLIENT', 'KILL', 'TYPE', 'pubsub'))).toBeGreaterThanOrEqual(1);

  test('20 waiters on held keys get the replay through three subscriber blips, none fails; no channel is left subscribed', async () => {
    const gate = latch();
    const holders = KEYS.map((key) => coordinator.run(request(key), async () => (await gate.promise, { chargeId: `ch_${key}` })));
    await waitUntil(() => coordinator.runningExecutions === KEYS.length, 10_000, 'the holders to claim');
    const waiters = KEYS.flatMap((key) => [1, 2].map(() => coordinator.run(request(key), async () => ({ chargeId: 'duplicate ran' }))));
    await allSubscribed(KEYS);
    for (let blip = 0; blip < 3; blip += 1) {
      await killSubscriber();
      // The waiters looked again, found their keys held, and subscribed anew.
      await allSubscribed(KEYS);
    }
    gate.open();
    await within(Promise.all(holders), 20_000, 'the holders');
    const answers = await within(Promise.allSettled(waiters), 20_000, 'the waiters');
    expect(answers.filter((answer) => answer.status === 'rejected')).toEqual([]);
    const values = answers.map((answer) => (answer as PromiseFulfilledResult<{ value: unknown; replayed: boolean }>).value);
    expect(values.every((answer) => answer.replayed)).toBe(true);
    expect(values.map((answer) => answer.value)).toEqual(KEYS.flatMap((key) => [{ chargeId: `ch_${key}` }, { chargeId: `ch_${key}` }]));
    await waitUntil(async () => (await channelsLeft()) === 0, 10_000, 'every channel to be unsubscribed');
  });

  test('channels whose waiters left while the subscriber was down are not subscribed again', async () => {
    const gate = latch();
    const holders = KEYS.map((key) => coordinator.run(request(key), async () => (await gate.promise, { chargeId: `ch_${key}` })));
    await waitUntil(() => coordinator.runningExecutions === KEYS.length, 10_000, 'the holders to claim');
    for (let blip = 0; blip < 3; blip += 1) {
      const callers = KEYS.map(() => new AbortController());
      const waiters = callers.map((caller, i) =>
        coordinator.run(request(KEYS[i] as string, caller.signal), async () => ({ chargeId: 'duplicate ran' })).catch(() => 'gone'),
      );
      await allSubscribed(KEYS);
      await killSubscriber();
      // Every caller goes away while the subscriber is down or just back.
      for (const caller of callers) caller.abort();
      expect(await within(Promise.all(waiters), 20_000, 'the waiters that left')).toEqual(KEYS.map(() => 'gone'));
      await waitUntil(async () => (await channelsLeft()) === 0, 10_000, 'no channel left subscribed');
    }
    gate.open();
    await within(Promise.all(holders), 20_000, 'the holders');
    expect(await channelsLeft()).toBe(0);
  });
});
