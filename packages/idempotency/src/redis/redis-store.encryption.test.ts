import type { Redis } from 'ioredis';
import { describeEncryptionAtRest, redisRawRecords } from '../encryption.test-support';
import { RedisStore } from './redis-store';
import { connect, deleteKeys, uniquePrefix } from './redis.test-support';

const prefix = uniquePrefix();
let client: Redis;
let store: RedisStore;

beforeAll(async () => {
  client = await connect();
  store = new RedisStore({ client, prefix });
});

afterAll(async () => {
  await store.close();
  await deleteKeys(client, prefix);
  await client.quit();
});

describeEncryptionAtRest('Redis (the record as stored)', () => ({ store, ...redisRawRecords(client, prefix) }));
