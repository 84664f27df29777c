import type { Redis } from 'ioredis';
import { describeEncryptionAtRest } from '../encryption.test-support';
import { RedisStore } from './redis-store';
import { connect, deleteKeys, readRecord, replaceResult, uniquePrefix } from './redis.test-support';

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

describeEncryptionAtRest('Redis (GET of the record, by field)', () => ({
  store,
  read: async (recordKey) => (await readRecord(client, hash(recordKey))) ?? {},
  writeResult: (recordKey, result) => replaceResult(client, hash(recordKey), result),
}));
