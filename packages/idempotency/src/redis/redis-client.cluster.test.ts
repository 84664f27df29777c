import { Cluster } from 'ioredis';
import { createRedisCluster } from './redis-client';
import { RedisStore } from './redis-store';
import { CLUSTER_THIRDS, startPrivateCluster, stopPrivateCluster, type PrivateClusterNode } from '../../test/support/redis';
import { uniquePrefix, waitUntil } from './redis.test-support';

// ioredis's Cluster.connect() can stay pending for ever while a startup node is down: its ready check
// (CLUSTER INFO to a random node) fails on that node, and the Cluster turns ready under a reconnection
// of its own that settles only its own promise. Seen on about half the attempts here: a service's boot
// hung on it. createRedisCluster's connect(), and RedisStore.connect() on any Cluster, settle.

/** Connections per case: with about half of them hanging before, eight all settling is no accident. */
const ATTEMPTS = 8;

describe('connecting to a private three-shard Redis Cluster with a master down', () => {
  let nodes: PrivateClusterNode[] = [];
  let live: PrivateClusterNode[] = [];
  const seeds = (from: PrivateClusterNode[], attempt: number) =>
    (attempt % 2 ? from : [...from].reverse()).map(({ port }) => ({ host: '127.0.0.1', port }));

  beforeAll(async () => {
    nodes = await startPrivateCluster();
    await nodes[1]?.server.stop();
    live = nodes.filter((_, i) => i !== 1);
  }, 60_000);
  afterAll(async () => stopPrivateCluster(live));

  /** A key of the first shard's, which is up. */
  const liveKey = async () => {
    const [from, to] = CLUSTER_THIRDS[0];
    for (;;) {
      const key = uniquePrefix();
      const slot = Number(await live[0]?.admin.call('CLUSTER', 'KEYSLOT', key));
      if (slot >= Number(from) && slot <= Number(to)) return key;
    }
  };

  it('createRedisCluster: connect() resolves every time, listing the dead node among the seeds', async () => {
    const key = await liveKey();
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const cluster = createRedisCluster(seeds(nodes, attempt));
      cluster.on('error', () => undefined);
      try {
        await cluster.connect();
        expect(cluster.status).toBe('ready');
        expect(cluster.listenerCount('ready')).toBeLessThanOrEqual(1);
        await cluster.set(key, String(attempt), 'PX', 60_000);
        expect(await cluster.get(key)).toBe(String(attempt));
      } finally {
        cluster.disconnect();
      }
    }
  }, 60_000);

  it('RedisStore.connect() resolves every time on a Cluster the app made itself', async () => {
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const cluster = new Cluster(seeds(nodes, attempt), { lazyConnect: true, enableOfflineQueue: false });
      cluster.on('error', () => undefined);
      const store = new RedisStore({ client: cluster, prefix: uniquePrefix(), ownsClient: true });
      try {
        await store.connect();
        expect(cluster.status).toBe('ready');
      } finally {
        await store.close();
      }
    }
  }, 60_000);

  it('createRedisCluster: connect() rejects after readyTimeoutMs when the Cluster never turns ready', async () => {
    // Full coverage required: with a shard down, the others report cluster_state:fail, which fails every ready check.
    for (const { admin } of live) await admin.call('CONFIG', 'SET', 'cluster-require-full-coverage', 'yes');
    await waitUntil(
      async () =>
        (await Promise.all(live.map(({ admin }) => admin.call('CLUSTER', 'INFO')))).every((info) =>
          /cluster_state:fail/.test(String(info)),
        ),
      10_000,
      'cluster_state:fail',
    );
    const cluster = createRedisCluster(seeds(live, 0), { readyTimeoutMs: 1500 });
    cluster.on('error', () => undefined);
    try {
      const started = Date.now();
      await expect(cluster.connect()).rejects.toThrow(/not ready within 1500 ms/);
      // Wide of the bound: a loaded machine may run the timer late, never early.
      expect(Date.now() - started).toBeGreaterThanOrEqual(1400);
      expect(Date.now() - started).toBeLessThan(15_000);
      // One listener waits for the Cluster's next ready, however many reconnections it went through meanwhile.
      expect(cluster.listenerCount('ready')).toBeLessThanOrEqual(1);
    } finally {
      cluster.disconnect();
      for (const { admin } of live) await admin.call('CONFIG', 'SET', 'cluster-require-full-coverage', 'no');
    }
  }, 60_000);

  it('createRedisCluster refuses a readyTimeoutMs that is not a positive number', () => {
    for (const readyTimeoutMs of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => createRedisCluster(seeds(live, 0), { readyTimeoutMs })).toThrow(RangeError);
    }
  });
});
