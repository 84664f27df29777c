import type { Cluster, ClusterOptions } from 'ioredis';
import { createRedisCluster } from '../../src/redis';
import { startTcpProxy, type TcpProxy } from './tcp-proxy';

/**
 * The Redis Cluster the cluster tests run against: `REDIS_CLUSTER_NODES`,
 * e.g. `127.0.0.1:7001,127.0.0.1:7002,...` as printed by
 * `bash infra/redis-cluster.sh up`. Required: a missing cluster fails the
 * tests with this message rather than skipping them.
 */
export function clusterNodes(): Array<{ host: string; port: number }> {
  const raw = process.env.REDIS_CLUSTER_NODES;
  if (!raw) {
    throw new Error(
      'REDIS_CLUSTER_NODES is not set. Start a local cluster with `bash infra/redis-cluster.sh up` and run the tests with ' +
        'REDIS_CLUSTER_NODES=$(bash infra/redis-cluster.sh nodes) (`npm run test:ci` at the root does both).',
    );
  }
  return raw.split(',').map((entry) => {
    const [host = '127.0.0.1', port = ''] = entry.trim().split(':');
    return { host, port: Number(port) };
  });
}

/** A connected cluster client with the store's fail-fast options. */
export async function connectCluster(options: ClusterOptions = {}): Promise<Cluster> {
  const cluster = createRedisCluster(clusterNodes(), options);
  cluster.on('error', () => undefined); // failures reach callers as rejections
  await cluster.connect();
  return cluster;
}

/**
 * A cluster client that reaches every node through its own TCP proxy
 * (ioredis `natMap` rewrites the addresses the nodes announce), so an outage
 * test can cut this client off without stopping the cluster others share.
 */
export async function connectProxiedCluster(): Promise<{ cluster: Cluster; stop(): Promise<void> }> {
  const proxies = new Map<string, TcpProxy>();
  for (const node of clusterNodes()) proxies.set(`${node.host}:${node.port}`, await startTcpProxy(node));
  const natMap = Object.fromEntries([...proxies].map(([address, proxy]) => [address, { host: '127.0.0.1', port: proxy.port }]));
  const startup = [...proxies.values()].map((proxy) => ({ host: '127.0.0.1', port: proxy.port }));
  const cluster = createRedisCluster(startup, { natMap, redisOptions: { disconnectTimeout: 100 } });
  cluster.on('error', () => undefined);
  await cluster.connect();
  return { cluster, stop: async () => void (await Promise.all([...proxies.values()].map((proxy) => proxy.stop()))) };
}

/** Delete every key under `prefix` on every master. */
export async function deleteClusterKeys(cluster: Cluster, prefix: string): Promise<void> {
  for (const node of cluster.nodes('master')) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      for (const key of keys) await node.del(key); // one key per call: keys of many slots live here
      cursor = next;
    } while (cursor !== '0');
  }
}
