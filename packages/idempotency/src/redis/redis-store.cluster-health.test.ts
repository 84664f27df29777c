import type { Cluster } from 'ioredis';
import { IdempotencyHealthIndicator } from '../nest/idempotency-health.indicator';
import { createRedisCluster } from './redis-client';
import { RedisStore, redisRecordKey } from './redis-store';
import { charge, failOpen } from '../../test/support/fail-open';
import { CLUSTER_THIRDS, startPrivateCluster, stopPrivateCluster, type PrivateClusterNode } from '../../test/support/redis';
import { uniquePrefix, waitUntil } from './redis.test-support';

// With `cluster-require-full-coverage no` a Cluster whose shard is down still serves every key of the others. Its
// health is then what a pod can do: serve those keys (up, degraded, naming what does not answer), not a verdict
// on the one shard that owns the ping's key, which marked every pod down (or up while a shard was gone).

describe('RedisStore ping on a private three-shard Redis Cluster that serves with a shard down', () => {
  let nodes: PrivateClusterNode[] = [];
  let cluster: Cluster;
  let store: RedisStore;
  const prefix = uniquePrefix();

  beforeAll(async () => {
    nodes = await startPrivateCluster();
    cluster = createRedisCluster(nodes.map(({ port }) => ({ host: '127.0.0.1', port })));
    cluster.on('error', () => undefined);
    store = new RedisStore({ client: cluster, prefix });
    await store.connect();
  });
  afterAll(async () => {
    await store?.close();
    cluster?.disconnect();
    await stopPrivateCluster(nodes);
  });

  /** The node whose shard owns `key`. */
  const owner = async (key: string) => {
    const slot = Number(await nodes[0]?.admin.call('CLUSTER', 'KEYSLOT', key));
    const index = CLUSTER_THIRDS.findIndex(([from, to]) => slot >= Number(from) && slot <= Number(to));
    return nodes[index] as (typeof nodes)[number];
  };

  /** Kill `node` and wait until the others mark it failed: the cluster now serves without its shard. */
  const kill = async (node: (typeof nodes)[number]) => {
    await node.server.stop();
    for (const other of nodes.filter((n) => n !== node)) {
      await waitUntil(
        async () =>
          String(await other.admin.call('CLUSTER', 'NODES')).includes(`127.0.0.1:${node.port}@`) &&
          /\bfail\b/.test(
            String(await other.admin.call('CLUSTER', 'NODES'))
              .split('\n')
              .find((l) => l.includes(`:${node.port}@`)) ?? '',
          ),
        20_000,
        `node ${node.port} marked failed`,
      );
    }
  };

  test('all shards up: ping is up, not degraded', async () => {
    await expect(store.ping()).resolves.toBeUndefined();
  });

  test("the shard of the ping's own key down: the others still charge, and ping is up, degraded, naming it", async () => {
    const down = await owner(redisRecordKey('idempotency-store:ping', prefix));
    await kill(down);
    const ran: string[] = [];
    // A key on a shard that is up is still served: a pod should keep taking traffic.
    let key = 'order-0';
    for (let i = 0; (await owner(redisRecordKey(failOpen(store).recordKey('payments.charge', '', key), prefix))) === down; i += 1)
      key = `order-${i}`;
    await expect(charge(failOpen(store), ran, key)).resolves.toMatchObject({ value: 'charged' });
    const health = await store.ping();
    expect(health).toMatchObject({ degraded: expect.stringContaining(`127.0.0.1:${down.port}`) });
    // The readiness probe keeps the pod in: every pod would be taken out alike, though each serves two shards of three.
    const readiness = new IdempotencyHealthIndicator({ service: 'payments', store });
    expect(await readiness.isHealthy()).toEqual({
      idempotencyStore: { status: 'up', message: expect.stringMatching(/^the idempotency store is degraded: .*do not answer/) },
    });
  });

  test('every shard down: ping is down, and so is readiness', async () => {
    for (const node of nodes) await node.server.stop();
    await expect(store.ping()).rejects.toThrow();
    const readiness = new IdempotencyHealthIndicator({ service: 'payments', store });
    expect(await readiness.isHealthy('store', 5_000)).toMatchObject({ store: { status: 'down' } });
  });
});
