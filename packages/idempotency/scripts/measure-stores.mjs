// Measure the stores: claim+complete throughput of each, the cost of
// `waitForReplicas`, and how often Redis Cluster loses an acknowledged claim
// when its master fails over. Not part of `npm test`: run it with
// `npm run measure -w @idempotency-chain/idempotency` (it builds first).
//
// It starts its own six-node cluster on ports 7101-7106 (infra/redis-cluster.sh,
// node timeout 3 s) so that killing masters never disturbs the test cluster,
// and tears it down at the end. Needs redis-server, a Redis on REDIS_URL and a
// PostgreSQL on DATABASE_URL. Bounded: about two minutes.
//
// Env: MEASURE_SECONDS (per throughput run, 3), CONCURRENCY (16),
// TAKEOVER_ATTEMPTS (50 per mode), KILL_ATTEMPTS (5 per mode).
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { MemoryStore } from '../dist/index.js';
import { createPostgresPool, migrate, PostgresStore } from '../dist/postgres/index.js';
import { createRedisClient, createRedisCluster, RedisStore, redisRecordKey } from '../dist/redis/index.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '../../..');
const seconds = Number(process.env.MEASURE_SECONDS ?? 3);
const concurrency = Number(process.env.CONCURRENCY ?? 16);
const forceAttempts = Number(process.env.TAKEOVER_ATTEMPTS ?? 50);
const killAttempts = Number(process.env.KILL_ATTEMPTS ?? 5);
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const CLUSTER_PORT = 7101;
const clusterEnv = { ...process.env, REDIS_CLUSTER_PORT: String(CLUSTER_PORT), REDIS_CLUSTER_NODE_TIMEOUT: '3000' };
const cluster = (...args) => execFileSync('bash', [join(root, 'infra/redis-cluster.sh'), ...args], { env: clusterEnv, encoding: 'utf8' });
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const newKey = () => randomBytes(32).toString('hex');

/** Claim+complete cycles per second over `seconds`, `workers` at a time, and the mean cycle latency. */
async function throughput(store, workers = concurrency) {
  let cycles = 0;
  let busyMs = 0;
  const until = Date.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (Date.now() < until) {
        const recordKey = newKey();
        const owner = randomUUID();
        const start = performance.now();
        const claim = await store.claim({ recordKey, fingerprint: 'fp', owner, leaseMs: 10_000 });
        if (claim.status !== 'claimed' || !(await store.complete(recordKey, owner, '{"statusCode":201}', 60_000)))
          throw new Error('cycle failed');
        busyMs += performance.now() - start;
        cycles += 1;
      }
    }),
  );
  return { perSecond: Math.round(cycles / seconds), meanMs: +(busyMs / cycles).toFixed(2) };
}

/** The master and replica ports that serve `key`'s slot right now. */
async function shardOf(admin, key) {
  const slot = await admin.cluster('KEYSLOT', key);
  for (const [start, end, master, ...replicas] of await admin.cluster('SLOTS')) {
    if (slot >= start && slot <= end) return { master: master[1], replica: replicas[0]?.[1] };
  }
  throw new Error(`no node serves slot ${slot}`);
}

const direct = async (port) => {
  const client = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  client.on('error', () => undefined);
  await client.connect();
  return client;
};

async function waitUntil(check, timeoutMs, what) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

const healthy = async (admin) => (await admin.cluster('INFO')).includes('cluster_state:ok');

/**
 * One failover per attempt, right after a claim was acknowledged: `takeover`
 * sends CLUSTER FAILOVER TAKEOVER to the shard's replica (promoted at once,
 * without catching up or asking the other masters), `kill` SIGKILLs the master process. Then read
 * the record on the promoted replica: lost when it is not there.
 */
async function failover(mode, attempts, waitForReplicas) {
  const client = createRedisCluster([{ host: '127.0.0.1', port: CLUSTER_PORT }], { retryDelayOnFailover: 100, maxRedirections: 50 });
  client.on('error', () => undefined);
  await client.connect();
  const store = new RedisStore({ client, prefix: 'measure:', ...(waitForReplicas && { waitForReplicas }) });
  const admin = await direct(CLUSTER_PORT);
  const result = { acknowledged: 0, lost: 0, refused: 0 };
  try {
    for (let i = 0; i < attempts; i += 1) {
      await waitUntil(() => healthy(admin), 20_000, 'a healthy cluster');
      const recordKey = newKey();
      const key = redisRecordKey(recordKey, 'measure:');
      let shard;
      // After a failover the demoted master joins as the replica a moment later.
      await waitUntil(
        async () => {
          shard = await shardOf(admin, key);
          if (!shard.replica) return false;
          const probe = await direct(shard.replica);
          const up = (await probe.info('replication')).includes('master_link_status:up');
          probe.disconnect();
          return up;
        },
        20_000,
        'a replica in sync',
      );
      const { master, replica } = shard;
      const replicaClient = await direct(replica);
      const pid = mode === 'kill' ? Number(/process_id:(\d+)/.exec(await (await direct(master)).info('server'))?.[1]) : 0;
      const owner = randomUUID();
      let claimed = false;
      try {
        claimed = (await store.claim({ recordKey, fingerprint: 'fp', owner, leaseMs: 60_000 })).status === 'claimed';
      } catch {
        result.refused += 1; // not acknowledged: WAIT saw too few replicas
      }
      if (mode === 'kill') process.kill(pid, 'SIGKILL');
      else await replicaClient.cluster('FAILOVER', 'TAKEOVER');
      if (claimed) result.acknowledged += 1;
      await waitUntil(async () => (await replicaClient.role())[0] === 'master', 20_000, 'the promotion');
      // The record names its owner by the first 8 bytes of its SHA-256, at byte 19 (see scripts.ts).
      const held = (await replicaClient.getBuffer(key))?.subarray(19, 27);
      if (claimed && !held?.equals(createHash('sha256').update(owner).digest().subarray(0, 8))) result.lost += 1;
      replicaClient.disconnect();
      if (mode === 'kill') {
        cluster('restart-node', String(master));
        await waitUntil(
          async () => (await (await direct(master)).info('replication')).includes('master_link_status:up'),
          20_000,
          'the restarted node to rejoin',
        );
      }
    }
  } finally {
    await store.close();
    await client.quit().catch(() => client.disconnect());
    admin.disconnect();
  }
  return result;
}

async function main() {
  const report = { machine: `${process.platform} ${process.arch}, ${(await import('node:os')).cpus().length} cores`, seconds, concurrency };
  cluster('up');
  const pool = createPostgresPool(DATABASE_URL, { max: concurrency + 2 });
  const schema = `idem_measure_${randomBytes(4).toString('hex')}`;
  try {
    const memory = new MemoryStore();
    report.memory = await throughput(memory);
    console.error('memory', report.memory);
    await memory.close();

    const redis = createRedisClient(REDIS_URL);
    await redis.connect();
    const redisStore = new RedisStore({ client: redis, prefix: `measure:${randomUUID()}:` });
    report.redis = await throughput(redisStore);
    await redisStore.close();
    await redis.quit();

    const clusterClient = createRedisCluster([{ host: '127.0.0.1', port: CLUSTER_PORT }]);
    await clusterClient.connect();
    const clusterStore = new RedisStore({ client: clusterClient, prefix: 'measure:' });
    report.cluster = await throughput(clusterStore);
    report.clusterOneAtATime = await throughput(clusterStore, 1);
    const waiting = new RedisStore({ client: clusterClient, prefix: 'measure:', waitForReplicas: { replicas: 1, timeoutMs: 1000 } });
    report.clusterWait = await throughput(waiting);
    report.clusterWaitOneAtATime = await throughput(waiting, 1);
    await clusterStore.close();
    await clusterClient.quit();

    await migrate(pool, { schema });
    const postgres = new PostgresStore({ pool, schema, sweepIntervalMs: 0 });
    report.postgres = await throughput(postgres);
    console.error('throughput', JSON.stringify(report));
    await postgres.close();

    report.failover = {
      takeover: {
        noWait: await failover('takeover', forceAttempts),
        wait: await failover('takeover', forceAttempts, { replicas: 1, timeoutMs: 100 }),
      },
      kill: { noWait: await failover('kill', killAttempts), wait: await failover('kill', killAttempts, { replicas: 1, timeoutMs: 100 }) },
    };
  } finally {
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
    await pool.end();
    cluster('down');
  }
  console.log(JSON.stringify(report, null, 2));
}

main().catch((error) => {
  console.error(error);
  try {
    cluster('down');
  } catch {
    // the cluster may not have come up: nothing to stop
  }
  process.exit(1);
});
