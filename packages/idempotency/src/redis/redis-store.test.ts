import type { Redis } from 'ioredis';
import { RedisStore } from './redis-store';
import { connect, deleteKeys, newStoreKey, uniquePrefix, waitUntil } from './redis.test-support';

const prefix = uniquePrefix();
const LEASE_MS = 30_000;
const RETENTION_MS = 60_000;
let client: Redis;
let store: RedisStore;

beforeAll(async () => {
  client = await connect();
  store = new RedisStore({ client, prefix });
});

afterAll(async () => {
  await store.close();
  await deleteKeys(client, prefix);
  await client.quit();
});

const recordKey = (storeKey: string) => `${prefix}{${storeKey}}`;
const claim = (storeKey: string, owner: string, leaseMs = LEASE_MS, fingerprint = 'fp-1') =>
  store.claim({ storeKey, fingerprint, owner, leaseMs });
const serverTimeMs = async () => {
  const [seconds, micros] = await client.time();
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
};
const gone = (storeKey: string) => async () => (await client.exists(recordKey(storeKey))) === 0;
async function claimedEpoch(storeKey: string, owner: string, leaseMs = LEASE_MS): Promise<number> {
  const result = await claim(storeKey, owner, leaseMs);
  if (result.status !== 'claimed') throw new Error(`expected claimed, got ${result.status}`);
  return result.epoch;
}

describe('RedisStore records', () => {
  test('claim creates an in-progress record under the hash-tagged key and returns an epoch from the server clock', async () => {
    const storeKey = newStoreKey();
    const before = await serverTimeMs();
    const epoch = await claimedEpoch(storeKey, 'owner-a');
    expect(Number.isSafeInteger(epoch)).toBe(true);
    expect(epoch).toBeGreaterThanOrEqual(before);
    expect(await client.hgetall(recordKey(storeKey))).toEqual({ status: 'in_progress', fp: 'fp-1', owner: 'owner-a', epoch: String(epoch) });
    expect(await client.get(`${recordKey(storeKey)}:epoch`)).toBe(String(epoch));
    const pttl = await client.pttl(recordKey(storeKey));
    expect(pttl).toBeGreaterThan(0);
    expect(pttl).toBeLessThanOrEqual(LEASE_MS);
  });

  test('a second claim sees in_progress with the first fingerprint and leaseRemainingMs <= leaseMs', async () => {
    const storeKey = newStoreKey();
    await claimedEpoch(storeKey, 'owner-a');
    const second = await claim(storeKey, 'owner-b', LEASE_MS, 'fp-other');
    expect(second).toEqual({ status: 'in_progress', fingerprint: 'fp-1', leaseRemainingMs: expect.any(Number) });
    if (second.status !== 'in_progress') throw new Error('unreachable');
    expect(second.leaseRemainingMs).toBeGreaterThan(0);
    expect(second.leaseRemainingMs).toBeLessThanOrEqual(LEASE_MS);
    expect(await client.hget(recordKey(storeKey), 'owner')).toBe('owner-a');
  });

  test('100 concurrent claims of one key: exactly one is claimed, the rest see in_progress', async () => {
    const storeKey = newStoreKey();
    const results = await Promise.all(Array.from({ length: 100 }, (_, i) => claim(storeKey, `owner-${i}`)));
    const claimed = results.filter((r) => r.status === 'claimed');
    expect(claimed).toHaveLength(1);
    expect(results.filter((r) => r.status === 'in_progress')).toHaveLength(99);
    const winner = results.findIndex((r) => r.status === 'claimed');
    expect(await client.hget(recordKey(storeKey), 'owner')).toBe(`owner-${winner}`);
  });

  test('complete by the owner: later claims replay the byte-identical result and fingerprint; retention is the TTL', async () => {
    const storeKey = newStoreKey();
    const result = JSON.stringify({ status: 201, body: { note: 'ünïcødé ✓ "quoted"\n\ttab', card: '💳', pad: 'x'.repeat(100_000) } });
    await claimedEpoch(storeKey, 'owner-a');
    expect(await store.complete(storeKey, 'owner-a', result, RETENTION_MS)).toBe(true);
    const replay = await claim(storeKey, 'owner-b', LEASE_MS, 'fp-other');
    expect(replay).toEqual({ status: 'completed', fingerprint: 'fp-1', result });
    if (replay.status !== 'completed') throw new Error('unreachable');
    expect(Buffer.from(replay.result).equals(Buffer.from(result))).toBe(true);
    const pttl = await client.pttl(recordKey(storeKey));
    expect(pttl).toBeGreaterThan(LEASE_MS);
    expect(pttl).toBeLessThanOrEqual(RETENTION_MS);
    expect(await store.complete(storeKey, 'owner-a', 'again', RETENTION_MS)).toBe(false);
  });

  test('complete, release and renew by a non-owner return false and leave the record as it was', async () => {
    const storeKey = newStoreKey();
    await claimedEpoch(storeKey, 'owner-a');
    const before = await client.hgetall(recordKey(storeKey));
    expect(await store.complete(storeKey, 'intruder', 'stolen', RETENTION_MS)).toBe(false);
    expect(await store.release(storeKey, 'intruder')).toBe(false);
    expect(await store.renew(storeKey, 'intruder', 10 * LEASE_MS)).toBe(false);
    expect(await client.hgetall(recordKey(storeKey))).toEqual(before);
    expect(await client.pttl(recordKey(storeKey))).toBeLessThanOrEqual(LEASE_MS);
  });

  test('complete, release and renew of an absent or completed record return false', async () => {
    const absent = newStoreKey();
    expect(await store.complete(absent, 'owner-a', 'r', RETENTION_MS)).toBe(false);
    expect(await store.release(absent, 'owner-a')).toBe(false);
    expect(await store.renew(absent, 'owner-a', LEASE_MS)).toBe(false);
    expect(await client.exists(recordKey(absent))).toBe(0);
    const done = newStoreKey();
    await claimedEpoch(done, 'owner-a');
    await store.complete(done, 'owner-a', 'r', RETENTION_MS);
    expect(await store.release(done, 'owner-a')).toBe(false);
    expect(await store.renew(done, 'owner-a', LEASE_MS)).toBe(false);
    expect(await client.hget(recordKey(done), 'status')).toBe('completed');
  });

  test('a stale owner whose lease expired cannot complete, release or renew the new owner\'s claim', async () => {
    const storeKey = newStoreKey();
    await claimedEpoch(storeKey, 'stale', 300);
    await waitUntil(gone(storeKey), 5000, 'the lease to expire');
    await claimedEpoch(storeKey, 'fresh');
    expect(await store.complete(storeKey, 'stale', 'late', RETENTION_MS)).toBe(false);
    expect(await store.release(storeKey, 'stale')).toBe(false);
    expect(await store.renew(storeKey, 'stale', LEASE_MS)).toBe(false);
    expect(await client.hgetall(recordKey(storeKey))).toMatchObject({ status: 'in_progress', owner: 'fresh' });
    expect(await store.complete(storeKey, 'fresh', 'ok', RETENTION_MS)).toBe(true);
  });

  test('release by the owner deletes the record; epochs strictly increase across release and re-claim', async () => {
    const storeKey = newStoreKey();
    const first = await claimedEpoch(storeKey, 'owner-a');
    expect(await store.release(storeKey, 'owner-a')).toBe(true);
    expect(await client.exists(recordKey(storeKey))).toBe(0);
    const second = await claimedEpoch(storeKey, 'owner-b');
    expect(await store.release(storeKey, 'owner-b')).toBe(true);
    const third = await claimedEpoch(storeKey, 'owner-c');
    expect(second).toBeGreaterThan(first);
    expect(third).toBeGreaterThan(second);
  });

  test('epochs strictly increase across lease expiry, and after the epoch counter itself expired', async () => {
    const storeKey = newStoreKey();
    const first = await claimedEpoch(storeKey, 'owner-a', 300);
    await waitUntil(gone(storeKey), 5000, 'the lease to expire');
    const second = await claimedEpoch(storeKey, 'owner-b');
    expect(second).toBeGreaterThan(first);
    // Stand in for retention and the counter's TTL running out. The counter
    // outlives its last epoch by a day, so by then the server clock has
    // passed every epoch it issued; here that takes a millisecond at most.
    await waitUntil(async () => (await serverTimeMs()) > second, 5000, 'the clock to pass the epoch');
    await client.del(recordKey(storeKey), `${recordKey(storeKey)}:epoch`);
    const third = await claimedEpoch(storeKey, 'owner-c');
    expect(third).toBeGreaterThan(second);
  });

  test('the epoch counter outlives a short lease', async () => {
    const storeKey = newStoreKey();
    await claimedEpoch(storeKey, 'owner-a', 300);
    expect(await client.pttl(`${recordKey(storeKey)}:epoch`)).toBeGreaterThan(60 * 60 * 1000);
  });

  test('renew by the owner extends the lease', async () => {
    const storeKey = newStoreKey();
    await claimedEpoch(storeKey, 'owner-a', 1000);
    expect(await store.renew(storeKey, 'owner-a', 60_000)).toBe(true);
    expect(await client.pttl(recordKey(storeKey))).toBeGreaterThan(50_000);
    expect(await client.hget(recordKey(storeKey), 'status')).toBe('in_progress');
  });

  test('a completed record expires after its retention and the key executes again', async () => {
    const storeKey = newStoreKey();
    const first = await claimedEpoch(storeKey, 'owner-a');
    await store.complete(storeKey, 'owner-a', 'r', 300);
    await waitUntil(gone(storeKey), 5000, 'retention to run out');
    expect(await claimedEpoch(storeKey, 'owner-b')).toBeGreaterThan(first);
  });

  test('rejects a non-positive lease or retention before touching Redis', async () => {
    const storeKey = newStoreKey();
    await expect(claim(storeKey, 'owner-a', 0)).rejects.toThrow(RangeError);
    await expect(store.complete(storeKey, 'owner-a', 'r', -1)).rejects.toThrow(RangeError);
    await expect(store.renew(storeKey, 'owner-a', Number.NaN)).rejects.toThrow(RangeError);
    expect(await client.exists(recordKey(storeKey))).toBe(0);
  });

  test('refuses a prefix that would break the hash tag', () => {
    expect(() => new RedisStore({ client, prefix: 'a{b}:' })).toThrow(RangeError);
  });
});
