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

/** Options of {@link createRedisCluster}: ioredis's own, and how long `connect()` may take. */
export interface FailFastClusterOptions extends ClusterOptions {
  /**
   * How long `connect()` waits for the Cluster to turn ready before it
   * rejects (the Cluster goes on reconnecting in the background, as after
   * any failed attempt). Default 10000 ms.
   */
  readyTimeoutMs?: number;
}

/** `FailFastClusterOptions.readyTimeoutMs` when none is given. */
const READY_TIMEOUT_MS = 10_000;

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
 * Its `connect()` resolves once the Cluster is ready and rejects when it is
 * not ready within `readyTimeoutMs`. ioredis's own can stay pending for
 * ever when a startup node is down, which would hang a service's boot:
 * its ready check, sent to that node, fails, and the Cluster turns ready
 * under a reconnection of its own that settles only its own promise.
 *
 * @example
 * const cluster = createRedisCluster(process.env.REDIS_CLUSTER_NODES!.split(','));
 * await cluster.connect();
 * const store = new RedisStore({ client: cluster, ownsClient: true }); // sharded pub/sub
 *
 * @public
 */
export function createRedisCluster(nodes: ClusterNode[], options: FailFastClusterOptions = {}): Cluster {
  const { readyTimeoutMs = READY_TIMEOUT_MS, ...clusterOptions } = options;
  const timeoutMs = positiveTimeout(readyTimeoutMs);
  const nodeOptions: RedisOptions = { ...FAIL_FAST_REDIS_OPTIONS };
  delete nodeOptions.lazyConnect; // the Cluster connects its nodes itself
  const cluster = new Cluster(nodes, {
    enableOfflineQueue: false,
    lazyConnect: true,
    retryDelayOnFailover: 200,
    retryDelayOnClusterDown: 200,
    maxRedirections: 16,
    ...clusterOptions,
    redisOptions: { ...nodeOptions, ...clusterOptions.redisOptions },
  });
  // ioredis calls connect() itself to reconnect, and ignores the outcome: bounded too, which costs it a timer.
  const connect = cluster.connect.bind(cluster);
  cluster.connect = () => untilReady(cluster, connect(), timeoutMs);
  bounded.add(cluster);
  return cluster;
}

/** The Clusters made by {@link createRedisCluster}, whose `connect()` is bounded already. */
const bounded = new WeakSet<Cluster>();

function positiveTimeout(ms: number): number {
  if (!Number.isFinite(ms) || ms <= 0) throw new RangeError(`readyTimeoutMs must be a positive number of ms, got ${ms}`);
  return ms;
}

/**
 * `connecting`, a Cluster's `connect()`, settled as the Cluster's readiness
 * is: resolved when it turns ready, even under a later attempt; rejected
 * with the attempt's error, or when `timeoutMs` pass first. ioredis's own
 * promise is left pending for ever when the attempt's ready check fails (it
 * sent `CLUSTER INFO` to a node that is down): the Cluster reconnects under
 * a new `connect()` of its own, turns ready, and settles only that one.
 */
function untilReady(cluster: Cluster, connecting: Promise<void>, timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`The Redis Cluster was not ready within ${timeoutMs} ms (status: ${cluster.status})`)),
      timeoutMs,
    );
    timer.unref();
  });
  return Promise.race([connecting, nextReady(cluster), late]).finally(() => clearTimeout(timer));
}

/**
 * Resolves when `cluster` next turns ready: one listener per Cluster
 * however many connections wait (ioredis reconnects every few hundred ms
 * while a ready check fails, each a `connect()` of its own).
 */
function nextReady(cluster: Cluster): Promise<void> {
  let next = readiness.get(cluster);
  if (!next) {
    next = new Promise<void>((resolve) =>
      cluster.once('ready', () => {
        readiness.delete(cluster);
        resolve();
      }),
    );
    readiness.set(cluster, next);
  }
  return next;
}
const readiness = new WeakMap<Cluster, Promise<void>>();

/**
 * Connect a client created with `lazyConnect` (resolving once it is ready,
 * rejecting when Redis is unreachable); a client already connecting or
 * connected is left as it is. A lazy client that fails here keeps
 * reconnecting on its own, as any ioredis client does after a lost connection.
 * A `Cluster` not made by {@link createRedisCluster} gets the same bound on
 * its `connect()`, with the default `readyTimeoutMs`.
 */
export async function openConnection(client: Redis | Cluster): Promise<void> {
  if (client.status !== 'wait') return;
  if (!isCluster(client) || bounded.has(client)) await client.connect();
  else await untilReady(client, client.connect(), READY_TIMEOUT_MS);
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
