import type { Redis } from 'ioredis';
import { describeOperatorRecords } from '../operator-records.test-support';
import { RedisStore } from './redis-store';
import { connect, deleteKeys, uniquePrefix } from './redis.test-support';

const prefix = uniquePrefix();
let client: Redis;
let store: RedisStore;

beforeAll(async () => {
  client = await connect();
  // Polls too seldom to matter: only a release's publish wakes a waiter in time.
  store = new RedisStore({ client, prefix, pollIntervalMs: 60_000 });
});

afterAll(async () => {
  await store.close();
  await deleteKeys(client, prefix);
  await client.quit();
});

describeOperatorRecords('Redis', () => store);
