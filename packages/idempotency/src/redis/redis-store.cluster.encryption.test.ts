import { randomUUID } from 'node:crypto';
import type { Cluster } from 'ioredis';
import { connectCluster, deleteClusterKeys } from '../../test/support/redis-cluster';
import { describeEncryptionAtRest } from '../encryption.test-support';
import { RedisStore } from './redis-store';

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

describeEncryptionAtRest('Redis Cluster (HGETALL of the record hash, on its master)', () => ({
  store,
  read: (recordKey) => cluster.hgetall(hash(recordKey)),
  writeResult: async (recordKey, result) => void (await cluster.hset(hash(recordKey), 'result', result)),
}));
