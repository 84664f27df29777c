import { Cluster, Redis, type ClusterNode, type ClusterOptions, type RedisOptions } from 'ioredis';
import { MAX_TIMER_MS } from '../milliseconds';

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
 * Options of {@link createRedisCluster}: ioredis's own, and how long
 * `connect()` may take.
 *
 * @public
 */
export interface FailFastClusterOptions extends ClusterOptions {
  /**
   * How long `connect()` waits for the Cluster to turn ready before it
   * rejects; the Cluster goes on reconnecting in the background, as after
   * any failed attempt, and a later `connect()` resolves once it is ready.
   * At most 2^31 - 1 ms (what a timer holds). Default 10000 ms.
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
  const timeoutMs = readyTimeout(readyTimeoutMs);
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
  return boundedConnect(cluster, timeoutMs);
}

function readyTimeout(ms: number): number {
  if (!(ms > 0 && ms <= MAX_TIMER_MS)) throw new RangeError(`readyTimeoutMs must be a number of ms from 1 to ${MAX_TIMER_MS}, got ${ms}`);
  return ms;
}

/** The Clusters whose `connect()` is bounded: made by {@link createRedisCluster}, or duplicated from one. */
const bounded = new WeakSet<Cluster>();

/**
 * Give `cluster` a `connect()` that settles (see {@link untilReady}), and
 * the same to its duplicates (RedisStore's subscriber is one).
 */
function boundedConnect(cluster: Cluster, timeoutMs: number): Cluster {
  const connect = cluster.connect.bind(cluster);
  const duplicate = cluster.duplicate.bind(cluster);
  readinessOf(cluster);
  cluster.connect = () => untilReady(cluster, connect, timeoutMs);
  cluster.duplicate = (...args: Parameters<Cluster['duplicate']>) => boundedConnect(duplicate(...args), timeoutMs);
  bounded.add(cluster);
  return cluster;
}

/** ioredis's Cluster's private fields the bound reads, in 5 and 6 alike. */
interface ClusterInternals {
  /** The timer of a reconnection it has scheduled; cleared just before that reconnection's `connect()`. */
  reconnectTimeout?: unknown;
  /** The app is closing it (`disconnect()`, `quit()`); false again once it has connected since. */
  manuallyClosing?: boolean;
}
const internals = (cluster: Cluster) => cluster as unknown as ClusterInternals;

/**
 * Connect `cluster` with `connect` (its own), settled as the Cluster's
 * readiness is: resolved when it turns ready, under whichever attempt;
 * rejected with the attempt's error, when the Cluster ends, when the app
 * closes it, or when `timeoutMs` pass first. ioredis's own promise is left
 * pending for ever when the attempt's ready check fails (it sent `CLUSTER
 * INFO` to a node that is down): the Cluster reconnects under a
 * `connect()` of its own, turns ready, and settles only that one.
 *
 * A Cluster ready already resolves at once. One connecting, with a
 * reconnection scheduled, or closing its connections to reconnect (after
 * a failed ready check) is waited for rather than sent a second attempt
 * (which ioredis refuses, or runs as a second reconnection loop): a boot
 * that retries after a timeout goes on. ioredis's own reconnection goes
 * through untouched: nobody awaits it, and a waiter for each would pile up
 * for as long as an outage lasts. It is the one call made while the
 * Cluster is between attempts (`reconnecting`, or `close` when a second
 * node's drain came after) with no reconnection scheduled, no app closing
 * it, and no end since.
 */
function untilReady(cluster: Cluster, connect: () => Promise<void>, timeoutMs: number): Promise<void> {
  const { status } = cluster;
  if (status === 'ready') return Promise.resolve();
  const readiness = readinessOf(cluster);
  const { reconnectTimeout, manuallyClosing } = internals(cluster);
  const betweenAttempts = status === 'reconnecting' || status === 'close';
  if (betweenAttempts && !reconnectTimeout && !manuallyClosing && !readiness.ended) return connect();
  const underWay = status === 'connecting' || status === 'connect' || reconnectTimeout || (status === 'disconnecting' && !manuallyClosing);
  return new Promise<void>((resolve, reject) => {
    const waiter = (error?: Error) => {
      readiness.waiters.delete(waiter);
      clearTimeout(timer);
      if (error) reject(error);
      else resolve();
    };
    readiness.waiters.add(waiter);
    // Referenced: an app awaiting its boot is kept alive until it is told, even by a Cluster that went quiet.
    const timer = setTimeout(
      () =>
        waiter(
          new Error(
            `The Redis Cluster was not ready within ${timeoutMs} ms, and goes on reconnecting (no node answered, or CLUSTER INFO said cluster_state:fail)`,
          ),
        ),
      timeoutMs,
    );
    if (!underWay) connect().then(() => waiter(), waiter);
  });
}

/** Who waits for a Cluster to turn ready, and whether it has ended since it last set out to connect. */
interface Readiness {
  waiters: Set<(error?: Error) => void>;
  ended: boolean;
}
const readinesses = new WeakMap<Cluster, Readiness>();

/**
 * `cluster`'s readiness, followed through its status events from the first
 * call on: one listener each however many wait. ioredis sets a status,
 * then emits it on the next tick, so an event the status has moved on from
 * is stale and settles nobody. `disconnecting` while the app closes the
 * Cluster rejects the waiters at once: between two attempts ioredis has
 * no connection left to close, and emits no `end` to tell them.
 */
function readinessOf(cluster: Cluster): Readiness {
  const known = readinesses.get(cluster);
  if (known) return known;
  const readiness: Readiness = { waiters: new Set(), ended: cluster.status === 'end' };
  readinesses.set(cluster, readiness);
  const settle = (error?: Error) => {
    for (const waiter of [...readiness.waiters]) waiter(error);
  };
  cluster.on('ready', () => {
    if (cluster.status === 'ready') settle();
  });
  cluster.on('connecting', () => {
    readiness.ended = false;
  });
  cluster.on('end', () => {
    // Ended, though a second node's drain may have set 'close' since; a 'connecting' after it starts anew.
    readiness.ended = true;
    if (cluster.status === 'end' || cluster.status === 'close') settle(new Error('The Redis Cluster ended before it was ready'));
  });
  cluster.on('disconnecting', () => {
    if (cluster.status === 'disconnecting' && internals(cluster).manuallyClosing)
      settle(new Error('The Redis Cluster was closed before it was ready'));
  });
  return readiness;
}

/**
 * Connect a client. A single `Redis` created with `lazyConnect` is
 * connected (resolving once it is ready, rejecting when Redis is
 * unreachable); one already connecting or connected is left as it is. A
 * lazy client that fails here keeps reconnecting on its own, as any ioredis
 * client does after a lost connection. A `Cluster` is connected, or waited
 * for, until it is ready, with the bound of {@link createRedisCluster}'s
 * `connect()` (the default `readyTimeoutMs` for one the app made itself).
 */
export async function openConnection(client: Redis | Cluster): Promise<void> {
  if (!isCluster(client)) {
    if (client.status === 'wait') await client.connect();
    return;
  }
  // A Cluster not ready yet is waited for, whatever its status: a boot that retries after a timeout goes on.
  if (client.status === 'ready') return;
  await (bounded.has(client) ? client.connect() : untilReady(client, () => client.connect(), READY_TIMEOUT_MS));
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
