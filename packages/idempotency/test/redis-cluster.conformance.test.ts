import { randomUUID } from 'node:crypto';
import type { Cluster } from 'ioredis';
import { RedisStore } from '../src/redis';
import { describeStoreConformance } from './store-conformance';
import { connectCluster, connectProxiedCluster, deleteClusterKeys } from './support/redis-cluster';

/**
 * The whole conformance suite against a real Redis Cluster (three masters,
 * three replicas: `infra/redis-cluster.sh`), with sharded pub/sub. Records of
 * one run land on every shard: store keys are random hashes.
 */
const RUN_PREFIX = `idem-cluster:${randomUUID()}:`;
/** Longer than the suite's 5 s safety bound, so only the SPUBLISH wakes a waiter in time. */
const POLL_INTERVAL_MS = 10_000;

let admin: Cluster | undefined;
let cases = 0;

afterAll(async () => {
  if (!admin) return;
  await deleteClusterKeys(admin, RUN_PREFIX);
  await admin.quit();
});

describeStoreConformance(
  'RedisStore on a Redis Cluster',
  async ({ outage }) => {
    const prefix = `${RUN_PREFIX}${(cases += 1)}:`;
    admin ??= await connectCluster();
    const cleanup = admin;
    if (outage) {
      // Cut off by closing its proxies: the cluster itself keeps serving the other cases.
      const proxied = await connectProxiedCluster();
      const store = new RedisStore({ client: proxied.cluster, prefix, pollIntervalMs: POLL_INTERVAL_MS, ownsClient: true });
      return {
        store,
        outage: { stop: () => proxied.stop() },
        teardown: async () => {
          await store.close();
          await proxied.stop();
          await deleteClusterKeys(cleanup, prefix);
        },
      };
    }
    const store = new RedisStore({ client: await connectCluster(), prefix, pollIntervalMs: POLL_INTERVAL_MS, ownsClient: true });
    return {
      store,
      teardown: async () => {
        await store.close();
        await deleteClusterKeys(cleanup, prefix);
      },
    };
  },
  { outage: true },
);
