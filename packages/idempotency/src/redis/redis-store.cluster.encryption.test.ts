import { randomUUID } from 'node:crypto';
import type { Cluster } from 'ioredis';
import { connectCluster, deleteClusterKeys } from '../../test/support/redis-cluster';
import { describeEncryptionAtRest } from '../encryption.test-support';
import { RedisStore } from './redis-store';
import { readRecord, replaceResult } from './redis.test-support';

const prefix = `test-cluster:${randomUUID()}:`;
let cluster: Cluster;
let store: RedisStore;

beforeAll(async () => {
  cluster = await connectCluster();
  store = new RedisStore({ client: cluster, prefix, pollIntervalMs: 60_000 });
});

afterAll(async () => {
  await store.close();
  await deleteClusterKeys(cluster, prefix);
  await cluster.quit();
});

const hash = (recordKey: string) => `${prefix}{${recordKey}}`;

describeEncryptionAtRest('Redis Cluster (GET of the record, on its master, by field)', () => ({
  store,
  read: async (recordKey) => (await readRecord(cluster, hash(recordKey))) ?? {},
  writeResult: (recordKey, result) => replaceResult(cluster, hash(recordKey), result),
}));
