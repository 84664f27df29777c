import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { RedisStore, createRedisClient } from '../src/redis';
import { deleteKeys } from '../src/redis/redis.test-support';
import { describeStoreConformance } from './store-conformance';
import { redisUrl, startPrivateRedis, stopRedisContainer } from './support/redis';

/** Every key this run writes lives under this prefix, so the run cleans up after itself. */
const RUN_PREFIX = `idem-conformance:${randomUUID()}:`;
/**
 * Longer than the suite's 5 s safety bound: a waiter that is not woken by
 * the completion signal times out the test instead of being rescued by a poll.
 */
const POLL_INTERVAL_MS = 10_000;

let admin: Redis | undefined;
let cases = 0;

async function connect(url: string): Promise<Redis> {
  const client = createRedisClient(url);
  client.on('error', () => undefined); // failures reach the store's callers as rejections
  await client.connect();
  return client;
}

afterAll(async () => {
  if (admin) {
    await deleteKeys(admin, RUN_PREFIX);
    await admin.quit();
  }
  await stopRedisContainer();
});

describeStoreConformance(
  'RedisStore',
  async ({ outage }) => {
    if (outage) {
      // Its own server: stopping it never touches the Redis other tests share.
      const server = await startPrivateRedis();
      const store = new RedisStore({
        client: await connect(server.url),
        prefix: RUN_PREFIX,
        pollIntervalMs: POLL_INTERVAL_MS,
        ownsClient: true,
      });
      return {
        store,
        outage: { stop: () => server.stop() },
        teardown: async () => {
          await store.close();
          await server.stop();
        },
      };
    }
    const url = await redisUrl();
    admin ??= await connect(url);
    const prefix = `${RUN_PREFIX}${(cases += 1)}:`;
    const store = new RedisStore({ client: await connect(url), prefix, pollIntervalMs: POLL_INTERVAL_MS, ownsClient: true });
    const cleanup = admin;
    return {
      store,
      teardown: async () => {
        await store.close();
        await deleteKeys(cleanup, prefix);
      },
    };
  },
  { outage: true },
);
