import { randomUUID } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';
import { RedisStore, redisRecordKey } from './redis-store';
import { RECORD_FORMAT } from './scripts';
import { RecordVersionError } from '../errors';
import { connectCluster, deleteClusterKeys } from '../../test/support/redis-cluster';
import { connect, deleteKeys, newRecordKey, track, waitUntil } from './redis.test-support';

/** Generous: a wake-up that works takes milliseconds; this only catches a missing one. */
const PROMPTLY_MS = 3_000;
const WAIT_MS = 30_000;
const prefix = `test-cluster:${randomUUID()}:`;

let cluster: Cluster;
let store: RedisStore;

beforeAll(async () => {
  cluster = await connectCluster();
  store = new RedisStore({ client: cluster, prefix, pollIntervalMs: 60_000 });
});

afterAll(async () => {
  await store.close();
  await deleteClusterKeys(cluster, prefix);
  await cluster.quit();
});

const record = (recordKey: string) => redisRecordKey(recordKey, prefix);
/** Subscribers of a shard channel, asked of the master that owns its slot. */
async function shardSubscribers(channel: string): Promise<number> {
  let total = 0;
  for (const node of cluster.nodes('master')) {
    const [, count] = (await node.call('PUBSUB', 'SHARDNUMSUB', channel)) as [string, number];
    total += Number(count);
  }
  return total;
}

describe('RedisStore on a Redis Cluster', () => {
  test('every key and the channel of one record hash to one slot; records spread over every master', async () => {
    const owners = new Set<string>();
    const slotOwner = new Map<number, string>();
    for (const [start, end, master] of await cluster.cluster('SLOTS')) {
      for (let slot = start; slot <= end; slot += 1) slotOwner.set(slot, `${master?.[0]}:${master?.[1]}`);
    }
    for (let i = 0; i < 30; i += 1) {
      const recordKey = newRecordKey();
      const key = record(recordKey);
      const [a, b, c] = await Promise.all([key, `${key}:epoch`, `${key}:done`].map((k) => cluster.cluster('KEYSLOT', k)));
      expect(b).toBe(a);
      expect(c).toBe(a);
      owners.add(slotOwner.get(a as number) as string);
      expect((await store.claim({ recordKey, fingerprint: 'fp', owner: 'o', leaseMs: 30_000 })).status).toBe('claimed');
    }
    expect(owners.size).toBe(3);
  });

  /**
   * What the coordinator does with a record in progress: wait, and on a
   * wake-up read the record; wait again while it is still in progress. A
   * wake-up is a hint, not a completion: the subscriber's own topology
   * changes (a shard's connection replaced) wake every waiter to look again.
   */
  async function outcome(recordKey: string, lookedAgain = (): void => undefined): Promise<string> {
    for (;;) {
      await store.waitForChange(recordKey, WAIT_MS);
      const seen = await store.claim({ recordKey, fingerprint: 'fp', owner: 'waiter', leaseMs: 60_000 });
      if (seen.status !== 'in_progress') return seen.status;
      lookedAgain();
    }
  }

  test('waiters on keys of every shard are woken by SPUBLISH from a store on another client, via SSUBSCRIBE on the owning shard', async () => {
    const other = new RedisStore({ client: await connectCluster(), prefix, pollIntervalMs: 60_000, ownsClient: true });
    try {
      const keys = Array.from({ length: 6 }, () => newRecordKey());
      for (const recordKey of keys) await other.claim({ recordKey, fingerprint: 'fp', owner: 'holder', leaseMs: 60_000 });
      const waiters = keys.map((recordKey) => track(outcome(recordKey)));
      for (const recordKey of keys)
        await waitUntil(async () => (await shardSubscribers(`${record(recordKey)}:done`)) === 1, 5000, 'the SSUBSCRIBE');
      expect(waiters.some((w) => w.settled)).toBe(false);
      const start = Date.now();
      for (const recordKey of keys) expect(await other.complete(recordKey, 'holder', '"r"', 60_000)).toBe(true);
      expect(await Promise.all(waiters.map((w) => w.promise))).toEqual(keys.map(() => 'completed'));
      expect(Date.now() - start).toBeLessThan(PROMPTLY_MS);
      for (const recordKey of keys)
        await waitUntil(async () => (await shardSubscribers(`${record(recordKey)}:done`)) === 0, 5000, 'the SUNSUBSCRIBE');
    } finally {
      await other.close();
    }
  });

  test('a shard’s subscriber connection cut (a failover, a network blip): waiters look at their records again, then still get the completion; none fails', async () => {
    const other = new RedisStore({ client: await connectCluster(), prefix, pollIntervalMs: 60_000, ownsClient: true });
    try {
      const keys = Array.from({ length: 6 }, () => newRecordKey());
      for (const recordKey of keys) await other.claim({ recordKey, fingerprint: 'fp', owner: 'holder', leaseMs: 60_000 });
      const wakeUps: string[] = [];
      const waiters = keys.map((recordKey) => track(outcome(recordKey, () => wakeUps.push(recordKey))));
      const subscribed = async () => (await Promise.all(keys.map((k) => shardSubscribers(`${record(k)}:done`)))).every((n) => n === 1);
      await waitUntil(subscribed, 5000, 'the SSUBSCRIBEs');
      // The subscriber connections of every shard are cut, as a failover or a blip would.
      for (const node of cluster.nodes('master')) await node.call('CLIENT', 'KILL', 'TYPE', 'pubsub');
      await waitUntil(() => wakeUps.length >= keys.length, 5000, 'every waiter to look again');
      await waitUntil(subscribed, 5000, 'the SSUBSCRIBEs again');
      expect(waiters.some((w) => w.settled)).toBe(false);
      for (const recordKey of keys) expect(await other.complete(recordKey, 'holder', '"r"', 60_000)).toBe(true);

      expect(await Promise.all(waiters.map((w) => w.promise))).toEqual(keys.map(() => 'completed'));
    } finally {
      await other.close();
    }
  });

  test('waitForReplicas: a claim acknowledged by the shard’s replica succeeds; asking for more replicas than exist rejects', async () => {
    const replicated = new RedisStore({ client: cluster, prefix, waitForReplicas: { replicas: 1, timeoutMs: 2_000 } });
    const recordKey = newRecordKey();
    expect((await replicated.claim({ recordKey, fingerprint: 'fp', owner: 'o', leaseMs: 30_000 })).status).toBe('claimed');
    expect(await replicated.complete(recordKey, 'o', '"r"', 60_000)).toBe(true);
    const greedy = new RedisStore({ client: cluster, prefix, waitForReplicas: { replicas: 2, timeoutMs: 200 } });
    await expect(greedy.claim({ recordKey: newRecordKey(), fingerprint: 'fp', owner: 'o', leaseMs: 30_000 })).rejects.toThrow(
      'The claim reached 1 of 2 replicas within 200 ms',
    );
  });

  test('waitForReplicas: once the shards forgot the scripts (SCRIPT FLUSH), a claim and its completion send them whole and succeed', async () => {
    const replicated = new RedisStore({ client: cluster, prefix, waitForReplicas: { replicas: 1, timeoutMs: 2_000 } });
    const recordKey = newRecordKey();
    await Promise.all(cluster.nodes('master').map((node) => node.script('FLUSH')));
    expect((await replicated.claim({ recordKey, fingerprint: 'fp', owner: 'o', leaseMs: 30_000 })).status).toBe('claimed');
    await Promise.all(cluster.nodes('master').map((node) => node.script('FLUSH')));
    expect(await replicated.complete(recordKey, 'o', '"r"', 60_000)).toBe(true);
    expect(await replicated.claim({ recordKey, fingerprint: 'fp', owner: 'p', leaseMs: 30_000 })).toMatchObject({
      status: 'completed',
      result: '"r"',
    });
  });

  test('a record of format 1 (earlier 0.x releases) or of an unknown version, on any shard, is refused by claim and wait and left as it is', async () => {
    const values = { '1': `1\nc2:fp1:o1764000000000\n"r"`, '3': '3\nc{"from":"a later release"}' };
    for (let i = 0; i < 6; i += 1) {
      const recordKey = newRecordKey();
      const [foundVersion, value] = Object.entries(values)[i % 2]!;
      await cluster.set(record(recordKey), value, 'PX', 60_000);
      await expect(store.claim({ recordKey, fingerprint: 'fp', owner: 'o', leaseMs: 30_000 })).rejects.toMatchObject({
        constructor: RecordVersionError,
        foundVersion,
        supportedVersion: RECORD_FORMAT,
      });
      await expect(store.waitForChange(recordKey, WAIT_MS)).rejects.toBeInstanceOf(RecordVersionError);
      expect(await store.complete(recordKey, 'o', '"r"', 60_000)).toBe(false);
      expect(await cluster.get(record(recordKey))).toBe(value);
    }
  });
});

describe('RedisStore with sharded pub/sub on a single Redis 7', () => {
  let client: Redis;
  const singlePrefix = `test-sharded:${randomUUID()}:`;
  beforeAll(async () => {
    client = await connect();
  });
  afterAll(async () => {
    await deleteKeys(client, singlePrefix);
    await client.quit();
  });

  test('a waiter is woken by SPUBLISH over SSUBSCRIBE', async () => {
    const sharded = new RedisStore({ client, prefix: singlePrefix, pubsub: 'sharded', pollIntervalMs: 60_000 });
    try {
      const recordKey = newRecordKey();
      await sharded.claim({ recordKey, fingerprint: 'fp', owner: 'o', leaseMs: 60_000 });
      const waiter = track(sharded.waitForChange(recordKey, WAIT_MS));
      const channel = `${redisRecordKey(recordKey, singlePrefix)}:done`;
      await waitUntil(async () => Number(((await client.call('PUBSUB', 'SHARDNUMSUB', channel)) as [string, number])[1]) === 1);
      expect(waiter.settled).toBe(false);
      const start = Date.now();
      expect(await sharded.complete(recordKey, 'o', '"r"', 60_000)).toBe(true);
      await waiter.promise;
      expect(Date.now() - start).toBeLessThan(PROMPTLY_MS);
    } finally {
      await sharded.close();
    }
  });
});
