import { randomUUID } from 'node:crypto';
import type { Cluster } from 'ioredis';
import { connectCluster, deleteClusterKeys } from '../../test/support/redis-cluster';
import { describeEncryptionAtRest, redisRawRecords } from '../encryption.test-support';
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

describeEncryptionAtRest('Redis Cluster (the record as stored, on its master)', () => ({ store, ...redisRawRecords(cluster, prefix) }));
