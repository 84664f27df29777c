import type { Redis } from 'ioredis';
import { describeEncryptionAtRest } from '../encryption.test-support';
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

const hash = (recordKey: string) => `${prefix}{${recordKey}}`;

describeEncryptionAtRest('Redis (HGETALL of the record hash)', () => ({
  store,
  read: (recordKey) => client.hgetall(hash(recordKey)),
  writeResult: async (recordKey, result) => void (await client.hset(hash(recordKey), 'result', result)),
}));
