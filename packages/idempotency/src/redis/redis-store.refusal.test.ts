import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { createRedisClient, createRedisCluster, FAIL_FAST_REDIS_OPTIONS } from './redis-client';
import { RedisStore } from './redis-store';
import { charge, expectChargedOnce, expectFailsOpen, failOpen } from '../../test/support/fail-open';
import { startPrivateRedis, startPrivateSentinel, type PrivateRedis } from '../../test/support/redis';
import { connect, deleteKeys, REDIS_URL, uniquePrefix, waitUntil } from './redis.test-support';

// A Redis that answers but refuses the store's user (its ACL, its password) is not an outage: under fail-open,
// every retry of a charge would run again. It is refused, and ping() says why.
/** A client that logs in as `username` with `password`, its errors heard (not printed). */
const clientAs = (url: string, username: string | undefined, password: string | undefined) => {
  const client = createRedisClient(url, { ...(username && { username }), ...(password && { password }) });
  const errors: string[] = [];
  client.on('error', (error: Error) => errors.push(error.message));
  return { client, errors };
};

describe('RedisStore with a user the shared Redis refuses (ACL)', () => {
  const prefix = uniquePrefix();
  const users: string[] = [];
  let admin: Redis;
  beforeAll(async () => {
    admin = await connect();
  });
  afterAll(async () => {
    for (const user of users) await admin.call('ACL', 'DELUSER', user);
    await deleteKeys(admin, prefix);
    await admin.quit();
  });
  /** A user of its own on the shared Redis, with `rules` on the store's keys and channels, and a store logged in as it. */
  const storeAs = async (...rules: string[]) => {
    const user = `idem_refused_${randomBytes(6).toString('hex')}`;
    const password = randomBytes(12).toString('hex');
    users.push(user);
    await admin.call('ACL', 'SETUSER', user, 'reset', 'on', `>${password}`, `~${prefix}*`, `&${prefix}*`, '+@all', ...rules);
    const { client } = clientAs(REDIS_URL, user, password);
    await client.connect();
    return { user, password, store: new RedisStore({ client, prefix, ownsClient: true }) };
  };

  test('a user that may not run scripts: ping is down naming the user, fail-open charges are refused and never run', async () => {
    const { user, password, store } = await storeAs('-evalsha', '-eval');
    const ran: string[] = [];
    try {
      await expect(store.ping()).rejects.toMatchObject({ name: 'StoreRefusedError', httpStatus: 500, cause: { message: /^NOPERM/ } });
      await expect(store.ping()).rejects.toThrow(`Redis refuses the idempotency store's user "${user}"`);
      const coordinator = failOpen(store);
      for (let attempt = 0; attempt < 3; attempt += 1) {
        await expect(charge(coordinator, ran, 'order-42')).rejects.toMatchObject({ name: 'StoreRefusedError' });
      }
      expect(ran).toEqual([]);
      await expect(store.ping()).rejects.not.toThrow(password);
    } finally {
      await store.close();
    }
  });

  test('a user that may run scripts but not a command in them: ping names it, the claim is refused', async () => {
    const { user, store } = await storeAs('-set');
    const ran: string[] = [];
    try {
      await expect(store.ping()).rejects.toThrow(`The Redis user "${user}" may not run SET on the idempotency store's keys`);
      await expect(store.ping()).rejects.toThrow(`ACL SETUSER ${user} +evalsha`);
      await expect(charge(failOpen(store), ran, 'k1')).rejects.toMatchObject({ name: 'StoreRefusedError' });
      expect(ran).toEqual([]);
    } finally {
      await store.close();
    }
  });

  test('a user without the store channels: ping is down naming PUBLISH (a completion a waiter marked would fail)', async () => {
    const { store } = await storeAs('resetchannels');
    try {
      await expect(store.ping()).rejects.toThrow('may not run PUBLISH');
    } finally {
      await store.close();
    }
  });

  test('a user that may publish but not subscribe: ping is down naming SUBSCRIBE (a waiter would read it as an outage)', async () => {
    const { store } = await storeAs('-subscribe');
    try {
      await expect(store.ping()).rejects.toThrow('may not run SUBSCRIBE');
    } finally {
      await store.close();
    }
  });

  test('a user without WAIT, for a store that waits for replicas: ping is down naming WAIT', async () => {
    const { user, password, store: plain } = await storeAs('-wait');
    const { client } = clientAs(REDIS_URL, user, password);
    await client.connect();
    const store = new RedisStore({ client, prefix, ownsClient: true, waitForReplicas: { replicas: 1, timeoutMs: 100 } });
    try {
      await expect(plain.ping()).resolves.toBeUndefined();
      await expect(store.ping()).rejects.toThrow('may not run WAIT');
    } finally {
      await store.close();
      await plain.close();
    }
  });

  test('a user with what the store needs is served', async () => {
    const { store } = await storeAs();
    const ran: string[] = [];
    try {
      await expect(store.ping()).resolves.toBeUndefined();
      await expectChargedOnce(failOpen(store), ran, 'k1');
      expect(ran).toEqual(['k1']);
    } finally {
      await store.close();
    }
  });

  test('a wrong password (WRONGPASS): the store is refused, not failed open, and ping says why without the password', async () => {
    const { user } = await storeAs().then(async (made) => (await made.store.close(), made));
    const { client, errors } = clientAs(REDIS_URL, user, 'not-the-password');
    const store = new RedisStore({ client, prefix, ownsClient: true });
    const ran: string[] = [];
    try {
      await expect(store.connect()).rejects.toThrow();
      await waitUntil(() => errors.some((message) => message.startsWith('WRONGPASS')), 5_000, 'the login to be refused');
      const refused = { name: 'StoreRefusedError', cause: { message: /^WRONGPASS/ } };
      await expect(charge(failOpen(store), ran, 'k1')).rejects.toMatchObject(refused);
      await expect(store.ping()).rejects.toThrow(`Redis refuses the idempotency store's login as "${user}"`);
      await expect(store.ping()).rejects.not.toThrow('not-the-password');
      expect(ran).toEqual([]);
    } finally {
      await store.close();
    }
  });
});

describe('RedisStore on a private Redis that requires a password (NOAUTH)', () => {
  test('a client without one is refused; once the server is gone, that is an outage again and fails open', async () => {
    const redis = await startPrivateRedis();
    const owner = await connect(redis.url);
    // The private server's own default user, never the shared one's.
    await owner.call('ACL', 'SETUSER', 'default', 'resetpass', `>${randomBytes(12).toString('hex')}`);
    await owner.quit();
    const { client, errors } = clientAs(redis.url, undefined, undefined);
    const store = new RedisStore({ client, prefix: uniquePrefix(), ownsClient: true });
    const ran: string[] = [];
    try {
      await expect(store.connect()).rejects.toThrow();
      await waitUntil(() => errors.some((message) => message.startsWith('NOAUTH')), 5_000, 'the login to be refused');
      await expect(charge(failOpen(store), ran, 'k1')).rejects.toMatchObject({ name: 'StoreRefusedError', cause: { message: /^NOAUTH/ } });
      await expect(store.ping()).rejects.toThrow('NOAUTH');
      expect(ran).toEqual([]);

      await redis.stop();
      const heard = errors.length;
      await waitUntil(() => errors.slice(heard).some((message) => message.includes('ECONNREFUSED')), 10_000, 'a refused connection');
      await expect(charge(failOpen(store), ran, 'k1')).resolves.toMatchObject({ value: 'charged' });
      expect(ran).toEqual(['k1']);
      await expect(store.ping()).rejects.toMatchObject({ name: expect.not.stringMatching('StoreRefusedError') });
    } finally {
      await store.close();
      await redis.stop();
    }
  });
});

describe('RedisStore whose first connection is refused, charged before the first AUTH reply', () => {
  // A lazy client connects with its first command; the store cannot tell a refusal from an outage until Redis
  // answers the login, so the first charges of a pod with a wrong password must wait for that answer.
  test.each([
    ['a wrong password (WRONGPASS)', 'not-the-password', /^WRONGPASS/],
    ['no password (NOAUTH)', undefined, /^NOAUTH/],
  ])('%s: the first charges are refused, none runs', async (_, password, refusal) => {
    const redis = await startPrivateRedis();
    const owner = await connect(redis.url);
    // The private server's own default user, never the shared one's.
    await owner.call('ACL', 'SETUSER', 'default', 'resetpass', `>${randomBytes(12).toString('hex')}`);
    await owner.quit();
    const { client } = clientAs(redis.url, undefined, password);
    const store = new RedisStore({ client, prefix: uniquePrefix(), ownsClient: true });
    const ran: string[] = [];
    try {
      const coordinator = failOpen(store);
      const charges = await Promise.allSettled(['k1', 'k2', 'k3'].map((key) => charge(coordinator, ran, key)));
      expect(ran).toEqual([]);
      for (const settled of charges) {
        expect(settled).toMatchObject({ status: 'rejected', reason: { name: 'StoreRefusedError', cause: { message: refusal } } });
      }
      await expect(store.ping()).rejects.toMatchObject({ name: 'StoreRefusedError' });
    } finally {
      await store.close();
      await redis.stop();
    }
  });

  test('a server that is not there: the first charges fail open as in any outage', async () => {
    const redis = await startPrivateRedis();
    await redis.stop();
    const { client } = clientAs(redis.url, undefined, undefined);
    const store = new RedisStore({ client, prefix: uniquePrefix(), ownsClient: true });
    try {
      await expectFailsOpen(store);
    } finally {
      await store.close();
    }
  });
});

describe('RedisStore through a private Redis Sentinel, a login refused', () => {
  // ioredis reports a Sentinel that refuses its password as "All sentinels are unreachable", the refusal only
  // as its last error; a master that refuses it, as WRONGPASS between such errors that name none. Read as an
  // outage, every charge under fail-open would run unprotected.
  test.each([
    ['by the Sentinel', 'sentinel', "Redis Sentinel refuses the idempotency store's login"],
    ['by the master', 'master', "Redis refuses the idempotency store's login"],
  ] as const)('%s: every charge is refused, none runs, and ping says which login to check', async (_, wrong, says) => {
    const password = randomBytes(12).toString('hex');
    const master = await startPrivateRedis();
    // Stopped whatever fails from here on: a private server outlives a test that threw before its finally.
    let sentinel: PrivateRedis | undefined;
    let store: RedisStore | undefined;
    try {
      sentinel = await startPrivateSentinel(Number(new URL(master.url).port), 'payments', password);
      // The private servers' own default users.
      const owner = await connect(wrong === 'sentinel' ? sentinel.url : master.url);
      await owner.call('ACL', 'SETUSER', 'default', 'resetpass', `>${password}`);
      owner.disconnect(); // a Sentinel knows no QUIT
      const client = new Redis({
        ...FAIL_FAST_REDIS_OPTIONS,
        sentinels: [{ host: '127.0.0.1', port: Number(new URL(sentinel.url).port) }],
        name: 'payments',
        ...(wrong === 'sentinel' ? { sentinelPassword: 'not-the-password' } : { password: 'not-the-password' }),
      });
      client.on('error', () => undefined);
      store = new RedisStore({ client, prefix: uniquePrefix(), ownsClient: true });
      const ran: string[] = [];
      const coordinator = failOpen(store);
      const outcomes: string[] = [];
      for (const key of ['k1', 'k2', 'k3', 'k4', 'k5']) {
        outcomes.push(
          await charge(coordinator, ran, key).then(
            () => 'charged',
            (error: Error) => error.name,
          ),
        );
      }
      expect({ outcomes, ran }).toEqual({ outcomes: Array(5).fill('StoreRefusedError'), ran: [] });
      await expect(store.ping()).rejects.toThrow(says);
      await expect(store.ping()).rejects.not.toThrow('not-the-password');
    } finally {
      await store?.close();
      await sentinel?.stop();
      await master.stop();
    }
  });
});

describe('RedisStore on a private Redis Cluster that refuses the login (WRONGPASS)', () => {
  test('a Cluster client with a wrong password is refused, though the Cluster reports it as slots it could not refresh', async () => {
    const redis = await startPrivateRedis({ cluster: true });
    const port = Number(new URL(redis.url).port);
    const owner = await connect(redis.url);
    await owner.call('CLUSTER', 'ADDSLOTSRANGE', '0', '16383');
    await waitUntil(async () => /cluster_state:ok/.test(String(await owner.call('CLUSTER', 'INFO'))), 20_000, 'the cluster to be ok');
    // The private server's own default user, never the shared one's.
    await owner.call('ACL', 'SETUSER', 'default', 'resetpass', `>${randomBytes(12).toString('hex')}`);
    await owner.quit();
    const cluster = createRedisCluster([{ host: '127.0.0.1', port }], { redisOptions: { password: 'not-the-password' } });
    const errors: string[] = [];
    cluster.on('error', (error: Error) => errors.push(error.message));
    const store = new RedisStore({ client: cluster, prefix: uniquePrefix(), ownsClient: true });
    const ran: string[] = [];
    try {
      await expect(store.connect()).rejects.toThrow();
      // The Cluster's own error comes after the node's WRONGPASS, and names it only as its lastNodeError.
      await waitUntil(() => errors.includes('Failed to refresh slots cache.'), 10_000, 'the slots refresh to fail');
      const refused = { name: 'StoreRefusedError', cause: { message: /^WRONGPASS/ } };
      for (let attempt = 0; attempt < 3; attempt += 1) await expect(charge(failOpen(store), ran, 'k1')).rejects.toMatchObject(refused);
      await expect(store.ping()).rejects.toMatchObject(refused);
      expect(ran).toEqual([]);
    } finally {
      await store.close();
      await redis.stop();
    }
  });
});
