import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { Redis } from 'ioredis';
import { IdempotencyHealthIndicator } from '../nest/idempotency-health.indicator';
import { createRedisClient, createRedisCluster, FAIL_FAST_REDIS_OPTIONS } from './redis-client';
import { RedisStore } from './redis-store';
import { charge, failOpen } from '../../test/support/fail-open';
import {
  startPrivateCluster,
  startPrivateRedis,
  startPrivateSentinel,
  stopPrivateCluster,
  type PrivateClusterNode,
  type PrivateRedis,
} from '../../test/support/redis';
import { connect, uniquePrefix, waitUntil } from './redis.test-support';

// A connection that drops while the store's user was disabled, its password rotated or its grants revoked comes
// back refused. Read as an outage, every charge under fail-open between the drop and the refused login would
// run unprotected, and again after each reconnect attempt; it is refused, and recovers once the login works.

/** How the store's user is broken on the server, and how it is mended. */
const BREAKS = [
  ['disabled (ACL SETUSER off)', ['off'], ['on']],
  ['its password rotated', ['resetpass', '>rotated-password'], ['resetpass', '>PASSWORD']],
  ['its grants revoked', ['-@all'], ['+@all']],
] as const;

/** `rules` with the user's password in place of `PASSWORD`. */
const withPassword = (rules: readonly string[], password: string) => rules.map((rule) => rule.replace('PASSWORD', password));

/**
 * Charge one new key after another, a turn of the event loop apart, until
 * `refusals` charges in a row were refused: the outcomes in order, each run
 * of one outcome as `outcome xN`, and how long the first refusal took.
 */
async function chargeUntilRefused(store: RedisStore, ran: string[], refusals = 5) {
  const coordinator = failOpen(store);
  const started = Date.now();
  const runs: { outcome: string; count: number }[] = [];
  let firstRefusalMs: number | undefined;
  for (let i = 0; ; i += 1) {
    const last = runs.at(-1);
    if (last?.outcome === 'StoreRefusedError' && last.count >= refusals) break;
    if (Date.now() - started > 20_000) throw new Error(`Not refused within 20 s: ${JSON.stringify(runs)}`);
    const outcome = await charge(coordinator, ran, `window-${i}`).then(
      () => 'charged',
      (error: Error) => error.name,
    );
    if (outcome === 'StoreRefusedError') firstRefusalMs ??= Date.now() - started;
    if (last?.outcome === outcome) last.count += 1;
    else runs.push({ outcome, count: 1 });
    await new Promise((resolve) => setImmediate(resolve));
  }
  return { outcomes: runs.map(({ outcome, count }) => `${outcome} x${count}`), firstRefusalMs };
}

/** End `user`'s connections on `admin`'s server; resolves once `client` knows its own is gone. */
async function killConnections(admin: Redis, client: Redis, user: string): Promise<void> {
  const dropped = once(client, 'reconnecting');
  await admin.call('CLIENT', 'KILL', 'USER', user);
  await dropped;
}

/** A user of its own on `admin`'s server, with every command on `prefix`'s keys and channels. */
async function addUser(admin: Redis, prefix: string): Promise<{ user: string; password: string }> {
  const user = `idem_relogin_${randomBytes(6).toString('hex')}`;
  const password = randomBytes(12).toString('hex');
  await admin.call('ACL', 'SETUSER', user, 'reset', 'on', `>${password}`, `~${prefix}*`, `&${prefix}*`, '+@all');
  return { user, password };
}

/** A store logged in as a user `break` spoils on the servers and `mend` puts right; `drop` ends its connections. */
interface Scenario {
  store: RedisStore;
  /** Resolves once the client knows its connections are gone, before its next login was answered. */
  drop(): Promise<void>;
  break(): Promise<void>;
  mend(): Promise<void>;
}

/**
 * Charged once, then its user broken and its connections dropped: every
 * charge from the drop on is refused, none runs, ping and readiness are
 * down as refused; mended, it is served again and readiness is up.
 */
async function expectRefusedUntilMended({ store, drop, break: spoil, mend }: Scenario): Promise<void> {
  const readiness = new IdempotencyHealthIndicator({ service: 'payments', store });
  const ran: string[] = [];
  await store.connect();
  await expect(charge(failOpen(store), ran, 'before')).resolves.toMatchObject({ value: 'charged' });

  await spoil();
  await drop();
  const { outcomes, firstRefusalMs } = await chargeUntilRefused(store, ran);
  expect({ outcomes, ran }).toEqual({ outcomes: [expect.stringMatching(/^StoreRefusedError x\d+$/)], ran: ['before'] });
  expect(firstRefusalMs).toBeLessThan(5_000);
  await expect(store.ping()).rejects.toMatchObject({ name: 'StoreRefusedError' });
  expect(await readiness.isHealthy('store', 5_000)).toEqual({
    store: { status: 'down', message: expect.stringMatching(/^the idempotency store refuses this service: /) },
  });

  await mend();
  await waitUntil(
    async () =>
      store.ping().then(
        () => true,
        () => false,
      ),
    15_000,
    'the store to recover',
  );
  await expect(charge(failOpen(store), ran, 'after')).resolves.toMatchObject({ value: 'charged' });
  expect(ran).toEqual(['before', 'after']);
  expect(await readiness.isHealthy('store', 5_000)).toEqual({ store: { status: 'up' } });
}

describe('RedisStore on a private Redis whose user is refused after a reconnect', () => {
  let redis: PrivateRedis;
  let admin: Redis;
  beforeAll(async () => {
    redis = await startPrivateRedis();
    admin = await connect(redis.url);
  });
  afterAll(async () => {
    admin?.disconnect();
    await redis?.stop();
  });

  test.each(BREAKS)('its user %s: every charge after the drop is refused, none runs, and it recovers', async (_, breaks, mends) => {
    const prefix = uniquePrefix();
    const { user, password } = await addUser(admin, prefix);
    const client = createRedisClient(redis.url, { username: user, password });
    client.on('error', () => undefined);
    const store = new RedisStore({ client, prefix, ownsClient: true });
    try {
      await expectRefusedUntilMended({
        store,
        drop: () => killConnections(admin, client, user),
        break: async () => void (await admin.call('ACL', 'SETUSER', user, ...withPassword(breaks, password))),
        mend: async () => void (await admin.call('ACL', 'SETUSER', user, ...withPassword(mends, password))),
      });
    } finally {
      await store.close();
      await admin.call('ACL', 'DELUSER', user);
    }
  });
});

describe('RedisStore through a private Redis Sentinel whose login is refused after a reconnect', () => {
  // On a reconnect ioredis asks a Sentinel for the master again, then logs in to the master: either may refuse.
  test.each([
    ['the master', 'off'],
    ['the master', 'resetpass'],
    ['the Sentinel', 'off'],
  ] as const)('the user on %s (%s): every charge after the drop is refused, none runs, and it recovers', async (where, how) => {
    const master = await startPrivateRedis();
    let sentinel: PrivateRedis | undefined;
    let store: RedisStore | undefined;
    const admins: Redis[] = [];
    try {
      const masterAdmin = await connect(master.url);
      admins.push(masterAdmin);
      const prefix = uniquePrefix();
      const { user, password } = await addUser(masterAdmin, prefix);
      sentinel = await startPrivateSentinel(Number(new URL(master.url).port), 'payments');
      const sentinelAdmin = await connect(sentinel.url);
      admins.push(sentinelAdmin);
      const sentinelPassword = randomBytes(12).toString('hex');
      await sentinelAdmin.call('ACL', 'SETUSER', 'idem_sentinel', 'reset', 'on', `>${sentinelPassword}`, '+@all');
      const client = new Redis({
        ...FAIL_FAST_REDIS_OPTIONS,
        sentinels: [{ host: '127.0.0.1', port: Number(new URL(sentinel.url).port) }],
        name: 'payments',
        username: user,
        password,
        sentinelUsername: 'idem_sentinel',
        sentinelPassword,
      });
      client.on('error', () => undefined);
      store = new RedisStore({ client, prefix, ownsClient: true });
      const [target, name] = where === 'the master' ? [masterAdmin, user] : [sentinelAdmin, 'idem_sentinel'];
      const secret = where === 'the master' ? password : sentinelPassword;
      const [spoil, mend] =
        how === 'off'
          ? [['off'], ['on']]
          : [
              ['resetpass', '>rotated-password'],
              ['resetpass', `>${secret}`],
            ];
      await expectRefusedUntilMended({
        store,
        drop: () => killConnections(masterAdmin, client, user),
        break: async () => void (await target.call('ACL', 'SETUSER', name, ...spoil)),
        mend: async () => void (await target.call('ACL', 'SETUSER', name, ...mend)),
      });
    } finally {
      await store?.close();
      for (const admin of admins) admin.disconnect();
      await sentinel?.stop();
      await master.stop();
    }
  });
});

describe('RedisStore on a private three-shard Redis Cluster whose user is refused after a reconnect', () => {
  let nodes: PrivateClusterNode[] = [];
  beforeAll(async () => {
    nodes = await startPrivateCluster();
  });
  afterAll(async () => {
    await stopPrivateCluster(nodes);
  });

  // ACLs are per node: an operator rotating the store's password or disabling its user does it on every node.
  test.each(BREAKS)(
    'its user %s on every node: every charge after the drop is refused, none runs, and it recovers',
    async (_, breaks, mends) => {
      const prefix = uniquePrefix();
      const user = `idem_relogin_${randomBytes(6).toString('hex')}`;
      const password = randomBytes(12).toString('hex');
      const everyNode = async (...args: string[]) => {
        for (const { admin } of nodes) await admin.call(args[0] as string, ...args.slice(1));
      };
      await everyNode('ACL', 'SETUSER', user, 'reset', 'on', `>${password}`, `~${prefix}*`, `&${prefix}*`, '+@all');
      const cluster = createRedisCluster(
        nodes.map(({ port }) => ({ host: '127.0.0.1', port })),
        { redisOptions: { username: user, password } },
      );
      cluster.on('error', () => undefined);
      const store = new RedisStore({ client: cluster, prefix, ownsClient: true });
      try {
        await expectRefusedUntilMended({
          store,
          drop: async () => {
            // Each connection the client had open ends (a lazy one never opened has nothing to drop).
            const open = cluster.nodes().filter((node) => node.status === 'ready');
            const dropped = Promise.all(open.map((node) => once(node, 'end')));
            await everyNode('CLIENT', 'KILL', 'USER', user);
            await dropped;
          },
          break: () => everyNode('ACL', 'SETUSER', user, ...withPassword(breaks, password)),
          mend: () => everyNode('ACL', 'SETUSER', user, ...withPassword(mends, password)),
        });
      } finally {
        await store.close();
        await everyNode('ACL', 'DELUSER', user);
      }
    },
  );
});
