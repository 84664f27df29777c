import { randomBytes } from 'node:crypto';
import type { Cluster } from 'ioredis';
import { IdempotencyHealthIndicator } from '../nest/idempotency-health.indicator';
import { createRedisCluster } from './redis-client';
import { RedisStore, redisRecordKey } from './redis-store';
import { charge, failOpen } from '../../test/support/fail-open';
import {
  CLUSTER_THIRDS,
  startPrivateCluster,
  startPrivateRedis,
  stopPrivateCluster,
  type PrivateClusterNode,
} from '../../test/support/redis';
import { connect, uniquePrefix, waitUntil } from './redis.test-support';

// With `cluster-require-full-coverage no` a Cluster whose shard is down still serves every key of the others. Its
// health is then what a pod can do: serve those keys (up, degraded, naming what does not answer), not a verdict
// on the one shard that owns the ping's key, which marked every pod down (or up while a shard was gone).

describe('RedisStore ping on a private three-shard Redis Cluster that serves with a shard down', () => {
  let nodes: PrivateClusterNode[] = [];
  let cluster: Cluster;
  let store: RedisStore;
  /** The node of the shard the tests below have stopped. */
  let downed: PrivateClusterNode | undefined;
  const prefix = uniquePrefix();

  /** A store logged in as a user of its own, connected while every shard is up (as a pod would have been). */
  const restricted = { user: `idem_degraded_${randomBytes(6).toString('hex')}`, store: undefined as unknown as RedisStore };

  beforeAll(async () => {
    nodes = await startPrivateCluster();
    cluster = createRedisCluster(nodes.map(({ port }) => ({ host: '127.0.0.1', port })));
    cluster.on('error', () => undefined);
    store = new RedisStore({ client: cluster, prefix });
    await store.connect();
    const password = randomBytes(12).toString('hex');
    for (const { admin } of nodes) {
      await admin.call('ACL', 'SETUSER', restricted.user, 'reset', 'on', `>${password}`, `~${prefix}*`, `&${prefix}*`, '+@all');
    }
    const client = createRedisCluster(
      nodes.map(({ port }) => ({ host: '127.0.0.1', port })),
      { redisOptions: { username: restricted.user, password } },
    );
    client.on('error', () => undefined);
    restricted.store = new RedisStore({ client, prefix, ownsClient: true });
    await restricted.store.connect();
  });
  afterAll(async () => {
    await restricted.store?.close();
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

  test('a master paused (SIGSTOP): readiness, within its default second, is up and degraded naming it', async () => {
    const paused = nodes[1] as PrivateClusterNode;
    paused.server.signal('SIGSTOP');
    try {
      const readiness = new IdempotencyHealthIndicator({ service: 'payments', store });
      // Its connections stay open, unanswered: its PING is given up on in time for the probe to answer.
      expect(await readiness.isHealthy()).toEqual({
        idempotencyStore: {
          status: 'up',
          message: expect.stringMatching(
            new RegExp(`^the idempotency store is degraded: Redis Cluster masters 127\\.0\\.0\\.1:${paused.port} `),
          ),
        },
      });
    } finally {
      paused.server.signal('SIGCONT');
    }
    await waitUntil(async () => (await store.ping()) === undefined, 20_000, 'the paused master to serve again');
  });

  test('a master that serves no slot down: degraded, naming it, and none of the records live there', async () => {
    const empty = await startPrivateRedis({ cluster: true });
    const port = Number(new URL(empty.url).port);
    const admin = await connect(empty.url);
    try {
      await admin.call('CONFIG', 'SET', 'cluster-node-timeout', '1000');
      await nodes[0]?.admin.call('CLUSTER', 'MEET', '127.0.0.1', String(port));
      for (const node of nodes) {
        await waitUntil(
          async () => String(await node.admin.call('CLUSTER', 'NODES')).includes(`:${port}@`),
          20_000,
          'the empty master met',
        );
      }
      admin.disconnect();
      await kill({ server: empty, port, admin });
      expect(await store.ping()).toEqual({
        degraded:
          `Redis Cluster masters 127.0.0.1:${port} (0 slots) do not answer: they serve no slot, so none of the store's records ` +
          "live there; the user's access was checked on the 3 masters that answer",
      });
    } finally {
      admin.disconnect();
      await empty.stop();
      for (const node of nodes) {
        const id = String(await node.admin.call('CLUSTER', 'NODES'))
          .split('\n')
          .find((line) => line.includes(`:${port}@`))
          ?.split(' ')[0];
        if (id) await node.admin.call('CLUSTER', 'FORGET', id);
      }
    }
  });

  test('a shard down: the others still charge, and ping is up, degraded, naming it and the share of records it holds', async () => {
    const down = await owner(redisRecordKey('idempotency-store:ping', prefix));
    downed = down;
    await kill(down);
    const ran: string[] = [];
    // A key on a shard that is up is still served: a pod should keep taking traffic.
    let key = 'order-0';
    for (let i = 0; (await owner(redisRecordKey(failOpen(store).recordKey('payments.charge', '', key), prefix))) === down; i += 1)
      key = `order-${i}`;
    await expect(charge(failOpen(store), ran, key)).resolves.toMatchObject({ value: 'charged' });
    const [from, to] = CLUSTER_THIRDS[nodes.indexOf(down)] ?? [];
    const slots = Number(to) - Number(from) + 1;
    const share = ((100 * slots) / 16384).toFixed(1);
    expect(await store.ping()).toEqual({
      degraded:
        `Redis Cluster masters 127.0.0.1:${down.port} (${slots} slots) do not answer: they serve ${slots} of 16384 slots; ` +
        "the store's records spread over every slot (a record's hash tag is a hash of its key), so about " +
        `${share}% of them, whatever their key, live there and fail as in an outage; ` +
        "the user's access was checked on the 2 masters that answer",
    });
    // The readiness probe keeps the pod in: every pod would be taken out alike, though each serves two shards of three.
    const readiness = new IdempotencyHealthIndicator({ service: 'payments', store });
    expect(await readiness.isHealthy()).toEqual({
      idempotencyStore: { status: 'up', message: expect.stringMatching(/^the idempotency store is degraded: .*do not answer/) },
    });
  });

  test('a shard down, and a master that answers denies the user SET: ping is down as refused, not degraded', async () => {
    const up = nodes.filter((node) => node !== downed);
    expect(up).toHaveLength(2);
    // ACLs are per node: one that answers now denies SET; the other still grants everything.
    await up[0]?.admin.call('ACL', 'SETUSER', restricted.user, '-set');
    await expect(restricted.store.ping()).rejects.toMatchObject({
      name: 'StoreRefusedError',
      message: expect.stringContaining(`"${restricted.user}" may not run SET`),
    });
    const readiness = new IdempotencyHealthIndicator({ service: 'payments', store: restricted.store });
    expect(await readiness.isHealthy('store', 5_000)).toEqual({
      store: { status: 'down', message: expect.stringMatching(/^the idempotency store refuses this service: .*may not run SET/) },
    });
  });

  test('every shard down: ping is down, and so is readiness', async () => {
    for (const node of nodes) await node.server.stop();
    await expect(store.ping()).rejects.toThrow();
    const readiness = new IdempotencyHealthIndicator({ service: 'payments', store });
    expect(await readiness.isHealthy('store', 5_000)).toMatchObject({ store: { status: 'down' } });
  });
});
