import { once } from 'node:events';
import { Cluster } from 'ioredis';
import { MAX_TIMER_MS } from '../milliseconds';
import { createRedisCluster } from './redis-client';
import { RedisStore } from './redis-store';
import { CLUSTER_THIRDS, freePort, startPrivateCluster, stopPrivateCluster, type PrivateClusterNode } from '../../test/support/redis';
import { uniquePrefix, waitUntil } from './redis.test-support';

// ioredis's Cluster.connect() can stay pending for ever while a startup node is down: its ready check
// (CLUSTER INFO to a random node) fails on that node, and the Cluster turns ready under a reconnection
// of its own that settles only its own promise. Seen on about half the attempts here: a service's boot
// hung on it. createRedisCluster's connect() (and its duplicates'), and RedisStore.connect() on any
// Cluster, settle.

/** Connections per case: with about half of them hanging before, eight all settling is no accident. */
const ATTEMPTS = 8;

const seeds = (from: PrivateClusterNode[], attempt = 0) =>
  (attempt % 2 ? from : [...from].reverse()).map(({ port }) => ({ host: '127.0.0.1', port }));

describe('connecting to a private three-shard Redis Cluster that serves with a master down', () => {
  let nodes: PrivateClusterNode[] = [];

  beforeAll(async () => {
    nodes = await startPrivateCluster();
    await nodes[1]?.server.stop();
  }, 60_000);
  afterAll(async () => stopPrivateCluster(nodes));

  /** A key of the first shard's, which is up. */
  const liveKey = async () => {
    const [from, to] = CLUSTER_THIRDS[0];
    for (;;) {
      const key = uniquePrefix();
      const slot = Number(await nodes[0]?.admin.call('CLUSTER', 'KEYSLOT', key));
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
        // Connecting a ready Cluster again is no error: a boot that retries goes on.
        await cluster.connect();
        await cluster.set(key, String(attempt), 'PX', 60_000);
        expect(await cluster.get(key)).toBe(String(attempt));
      } finally {
        cluster.disconnect();
      }
    }
  }, 60_000);

  it('createRedisCluster: connect() after disconnect() resolves only once the Cluster is ready again', async () => {
    const key = await liveKey();
    const cluster = createRedisCluster(seeds(nodes));
    cluster.on('error', () => undefined);
    try {
      await cluster.connect();
      cluster.disconnect();
      // In the same tick: the 'ready' event of the first connection is still to come, and must not count.
      await cluster.connect();
      expect(cluster.status).toBe('ready');
      await cluster.set(key, 'again', 'PX', 60_000);
    } finally {
      cluster.disconnect();
    }
  }, 60_000);

  it("createRedisCluster: a duplicate's connect() resolves every time (RedisStore's subscriber is one)", async () => {
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const cluster = createRedisCluster(seeds(nodes, attempt));
      const duplicate = cluster.duplicate();
      duplicate.on('error', () => undefined);
      try {
        await duplicate.connect();
        expect(duplicate.status).toBe('ready');
      } finally {
        duplicate.disconnect();
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

  it('createRedisCluster refuses a readyTimeoutMs no timer holds', () => {
    for (const readyTimeoutMs of [0, -1, Number.NaN, MAX_TIMER_MS + 1, Number.POSITIVE_INFINITY]) {
      expect(() => createRedisCluster(seeds(nodes), { readyTimeoutMs })).toThrow(RangeError);
    }
  });
});

describe('connecting to a private three-shard Redis Cluster that fails with a master down', () => {
  let nodes: PrivateClusterNode[] = [];
  let live: PrivateClusterNode[] = [];

  beforeAll(async () => {
    nodes = await startPrivateCluster();
    // Set before the master stops: Redis works out cluster_state when a node's flags change, not when this does.
    for (const { admin } of nodes) await admin.call('CONFIG', 'SET', 'cluster-require-full-coverage', 'yes');
    await nodes[1]?.server.stop();
    live = nodes.filter((_, i) => i !== 1);
    await waitUntil(
      async () =>
        (await Promise.all(live.map(({ admin }) => admin.call('CLUSTER', 'INFO')))).every((info) =>
          /cluster_state:fail/.test(String(info)),
        ),
      30_000,
      'cluster_state:fail',
    );
  }, 60_000);
  afterAll(async () => stopPrivateCluster(nodes));

  it('connect() rejects as soon as the Cluster ends, its retry strategy giving up', async () => {
    const cluster = createRedisCluster(seeds(live), { clusterRetryStrategy: () => null });
    cluster.on('error', () => undefined);
    await expect(cluster.connect()).rejects.toThrow(/ended before it was ready/);
    expect(cluster.status).toBe('end');
    // A boot that retries through the store tries again, and is told again: never "connected" to an ended Cluster.
    await expect(new RedisStore({ client: cluster, prefix: uniquePrefix() }).connect()).rejects.toThrow(/ended before it was ready/);
  }, 30_000);

  // Last: it ends the failure, which Redis does not work out again when coverage is required once more.
  it('connect() rejects after readyTimeoutMs; connecting again waits for the Cluster, which turns ready in the background', async () => {
    // cluster_state:fail fails every ready check: ioredis reconnects, and its connect() never settles.
    const cluster = createRedisCluster(seeds(live), { readyTimeoutMs: 1500 });
    cluster.on('error', () => undefined);
    const store = new RedisStore({ client: cluster, prefix: uniquePrefix() });
    const timers = () => process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;
    try {
      const started = Date.now();
      await expect(cluster.connect()).rejects.toThrow(/not ready within 1500 ms, and goes on reconnecting/);
      // Wide of the bound: a loaded machine may run the timer late, never early.
      expect(Date.now() - started).toBeGreaterThanOrEqual(1400);
      expect(Date.now() - started).toBeLessThan(15_000);

      // ioredis goes on reconnecting (every few hundred ms): none of its attempts leaves a timer or a listener
      // behind. Counted as each is scheduled, when ioredis itself holds only the timer of the next one.
      await once(cluster, 'reconnecting');
      const [timersBefore, listeners] = [timers(), cluster.listenerCount('ready')];
      for (let reconnection = 0; reconnection < 3; reconnection++) await once(cluster, 'reconnecting');
      expect(timers()).toBeLessThanOrEqual(timersBefore + 1);
      expect(cluster.listenerCount('ready')).toBe(listeners);

      // A boot that retries waits for the Cluster, on its own and through the store, until the shards serve again.
      const retried = [cluster.connect(), store.connect()];
      for (const { admin } of live) await admin.call('CONFIG', 'SET', 'cluster-require-full-coverage', 'no');
      await Promise.all(retried);
      expect(cluster.status).toBe('ready');
    } finally {
      await store.close();
      cluster.disconnect();
    }
  }, 60_000);
});

describe('connecting to a Redis Cluster nobody answers for', () => {
  it('ioredis keeps the handle of a scheduled reconnection where the bound looks for it', async () => {
    // The bound tells ioredis's own reconnections from the app's calls by this private field (ioredis 5 and 6).
    const cluster = createRedisCluster([{ host: '127.0.0.1', port: await freePort() }], { clusterRetryStrategy: () => 60_000 });
    cluster.on('error', () => undefined);
    try {
      await expect(cluster.connect()).rejects.toThrow(/None of startup nodes is available/);
      expect(cluster.status).toBe('reconnecting');
      expect((cluster as unknown as { reconnectTimeout?: unknown }).reconnectTimeout).toBeTruthy();
    } finally {
      cluster.disconnect();
    }
  });

  it('disconnect() and quit() tell a connect() waiting between two attempts at once', async () => {
    for (const close of ['disconnect', 'quit'] as const) {
      const cluster = createRedisCluster([{ host: '127.0.0.1', port: await freePort() }], {
        clusterRetryStrategy: () => 60_000,
        readyTimeoutMs: 60_000,
      });
      cluster.on('error', () => undefined);
      await expect(cluster.connect()).rejects.toThrow(/None of startup nodes is available/);
      // The retry waits for the reconnection ioredis has scheduled; the app gives up before it comes.
      const retried = cluster.connect();
      const started = Date.now();
      if (close === 'quit') await cluster.quit();
      else cluster.disconnect();
      await expect(retried).rejects.toThrow(/closed before it was ready/);
      expect(Date.now() - started).toBeLessThan(10_000);
    }
  });

  it('disconnect() on a Cluster the app made itself tells RedisStore.connect() waiting between two attempts at once', async () => {
    const cluster = new Cluster([{ host: '127.0.0.1', port: await freePort() }], {
      lazyConnect: true,
      enableOfflineQueue: false,
      clusterRetryStrategy: () => 60_000,
    });
    cluster.on('error', () => undefined);
    const store = new RedisStore({ client: cluster, prefix: uniquePrefix() });
    await expect(store.connect()).rejects.toThrow(/None of startup nodes is available/);
    const retried = store.connect();
    const started = Date.now();
    cluster.disconnect();
    await expect(retried).rejects.toThrow(/closed before it was ready/);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('RedisStore.connect() after close() refuses, and leaves its Cluster closed', async () => {
    const cluster = createRedisCluster([{ host: '127.0.0.1', port: await freePort() }]);
    cluster.on('error', () => undefined);
    const store = new RedisStore({ client: cluster, prefix: uniquePrefix(), ownsClient: true });
    await store.close();
    await expect(store.connect()).rejects.toThrow(/RedisStore is closed/);
    expect(cluster.status).toBe('end');
  });
});
