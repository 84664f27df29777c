import { Cluster, Redis, type ClusterNode, type ClusterOptions, type RedisOptions } from 'ioredis';

/**
 * Client options that make an unreachable Redis fail fast instead of hanging
 * the request that needs it. A store call that hangs holds a request past
 * its caller's deadline and hides the outage; one that fails at once lets
 * the coordinator answer 503 (fail closed) or run unprotected (fail open).
 *
 * - `enableOfflineQueue: false`: while the connection is down a command is
 *   refused at once instead of queued until Redis comes back. (`RedisStore`
 *   waits for the answer of one connection attempt under way, at most the
 *   connect timeout, so that a login refused is not read as an outage.)
 * - `maxRetriesPerRequest: 1`: a command caught in flight by a dropped
 *   connection is given up after one reconnection attempt, not twenty.
 * - `commandTimeout: 1000`: covers what the other two cannot see, a server
 *   that keeps the TCP connection open but stops answering (paused,
 *   swapping, black-holed). The store's scripts are O(1); a second is ample.
 * - `connectTimeout: 2000`: the same bound for establishing a connection.
 * - `lazyConnect: true`: with the offline queue off, a command sent before
 *   the first `ready` would be refused, so boot awaits `client.connect()`,
 *   which resolves on `ready` and rejects when Redis is unreachable.
 *
 * Apply them with {@link createRedisClient}, or spread them into your own
 * `new Redis(...)` options.
 *
 * @public
 */
export const FAIL_FAST_REDIS_OPTIONS: Readonly<RedisOptions> = Object.freeze({
  enableOfflineQueue: false,
  maxRetriesPerRequest: 1,
  commandTimeout: 1000,
  connectTimeout: 2000,
  lazyConnect: true,
});

/**
 * Create an ioredis client with {@link FAIL_FAST_REDIS_OPTIONS}; `options`
 * override them one by one. The client does not connect until
 * `connect()` is awaited.
 *
 * @example
 * const client = createRedisClient(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
 * client.on('error', (error) => logger.warn({ error }, 'redis'));
 * await client.connect(); // rejects if Redis is unreachable at boot
 * const store = new RedisStore({ client, ownsClient: true });
 *
 * @public
 */
export function createRedisClient(url: string, options: RedisOptions = {}): Redis {
  return new Redis(url, { ...FAIL_FAST_REDIS_OPTIONS, ...options });
}

/**
 * Create an ioredis `Cluster` that fails fast like {@link createRedisClient}:
 * no offline queue, a command timeout, `lazyConnect` (await `connect()`),
 * and {@link FAIL_FAST_REDIS_OPTIONS} on every node connection. Unlike a
 * single client it keeps ioredis's retries on MOVED/ASK and on
 * `CLUSTERDOWN` during a failover (`retryDelayOnFailover`,
 * `retryDelayOnClusterDown`, bounded by `maxRedirections`), so a failover
 * costs latency rather than errors once a replica has taken over.
 * `options` override these one by one.
 *
 * @example
 * const cluster = createRedisCluster(process.env.REDIS_CLUSTER_NODES!.split(','));
 * await cluster.connect();
 * const store = new RedisStore({ client: cluster, ownsClient: true }); // sharded pub/sub
 *
 * @public
 */
export function createRedisCluster(nodes: ClusterNode[], options: ClusterOptions = {}): Cluster {
  const nodeOptions: RedisOptions = { ...FAIL_FAST_REDIS_OPTIONS };
  delete nodeOptions.lazyConnect; // the Cluster connects its nodes itself
  return new Cluster(nodes, {
    enableOfflineQueue: false,
    lazyConnect: true,
    retryDelayOnFailover: 200,
    retryDelayOnClusterDown: 200,
    maxRedirections: 16,
    ...options,
    redisOptions: { ...nodeOptions, ...options.redisOptions },
  });
}

/**
 * Connect a client created with `lazyConnect` (resolving once it is ready,
 * rejecting when Redis is unreachable); a client already connecting or
 * connected is left as it is. A lazy client that fails here keeps
 * reconnecting on its own, as any ioredis client does after a lost connection.
 */
export async function openConnection(client: Redis | Cluster): Promise<void> {
  if (client.status === 'wait') await client.connect();
}

/**
 * Close a connection without waiting on a dead server: QUIT lets pending
 * replies arrive when the connection is up; otherwise there is nothing to
 * wait for, and QUIT itself could queue or be refused.
 */
export async function closeConnection(client: Redis | Cluster): Promise<void> {
  if (client.status === 'end') return;
  if (client.status !== 'ready') {
    client.disconnect();
    return;
  }
  await client.quit().catch(() => client.disconnect());
}

/** `isCluster` rather than `instanceof`, which fails when two copies of ioredis are loaded. */
export function isCluster(client: Redis | Cluster): client is Cluster {
  return (client as { isCluster?: boolean }).isCluster === true;
}
