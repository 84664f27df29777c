import { randomUUID } from 'node:crypto';
import type { Cluster } from 'ioredis';
import { connectCluster, deleteClusterKeys } from '../../test/support/redis-cluster';
import { describeOperatorRecords } from '../operator-records.test-support';
import { RedisStore } from './redis-store';

const prefix = `test-cluster:${randomUUID()}:`;
let cluster: Cluster;
let store: RedisStore;

beforeAll(async () => {
  cluster = await connectCluster();
  // Sharded pub/sub; polls too seldom to matter: only a release's SPUBLISH wakes a waiter in time.
  store = new RedisStore({ client: cluster, prefix, pollIntervalMs: 60_000 });
});

afterAll(async () => {
  await store.close();
  await deleteClusterKeys(cluster, prefix);
  await cluster.quit();
});

describeOperatorRecords('Redis Cluster', () => store);
