import type { Redis } from 'ioredis';
import { RedisStore } from './redis-store';
import { isRecordVersionError, RecordVersionError } from '../errors';
import { inspectRecord, releaseRecord } from '../operator-records';
import { expectCoordinatorRefuses } from '../record-version.test-support';
import { connect, deleteKeys, newRecordKey, readRecord, uniquePrefix, waitUntil } from './redis.test-support';

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

const redisKey = (recordKey: string) => `${prefix}{${recordKey}}`;
const claim = (recordKey: string, owner: string, leaseMs = LEASE_MS, fingerprint = 'fp-1') =>
  store.claim({ recordKey, fingerprint, owner, leaseMs });
const serverTimeMs = async () => {
  const [seconds, micros] = await client.time();
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
};
/** The absolute time a key expires at, in ms (PEXPIRETIME, Redis 7). */
const expiresAt = async (key: string) => Number(await client.call('PEXPIRETIME', key));
const DAY_MS = 24 * 60 * 60 * 1000;
const gone = (recordKey: string) => async () => (await client.exists(redisKey(recordKey))) === 0;
async function claimedEpoch(recordKey: string, owner: string, leaseMs = LEASE_MS): Promise<number> {
  const result = await claim(recordKey, owner, leaseMs);
  if (result.status !== 'claimed') throw new Error(`expected claimed, got ${result.status}`);
  return result.epoch;
}

describe('RedisStore records', () => {
  test('claim creates an in-progress record under the hash-tagged key and returns an epoch from the server clock', async () => {
    const recordKey = newRecordKey();
    const before = await serverTimeMs();
    const epoch = await claimedEpoch(recordKey, 'owner-a');
    expect(Number.isSafeInteger(epoch)).toBe(true);
    expect(epoch).toBeGreaterThanOrEqual(before);
    expect(await readRecord(client, redisKey(recordKey))).toEqual({
      status: 'in_progress',
      fp: 'fp-1',
      owner: 'owner-a',
      epoch: String(epoch),
    });
    // A key never released needs no counter: the path of nearly every request writes one key.
    expect(await client.exists(`${redisKey(recordKey)}:epoch`)).toBe(0);
    const pttl = await client.pttl(redisKey(recordKey));
    expect(pttl).toBeGreaterThan(0);
    expect(pttl).toBeLessThanOrEqual(LEASE_MS);
  });

  test('a second claim sees in_progress with the first fingerprint and leaseRemainingMs <= leaseMs', async () => {
    const recordKey = newRecordKey();
    await claimedEpoch(recordKey, 'owner-a');
    const second = await claim(recordKey, 'owner-b', LEASE_MS, 'fp-other');
    expect(second).toEqual({ status: 'in_progress', fingerprint: 'fp-1', leaseRemainingMs: expect.any(Number) });
    if (second.status !== 'in_progress') throw new Error('unreachable');
    expect(second.leaseRemainingMs).toBeGreaterThan(0);
    expect(second.leaseRemainingMs).toBeLessThanOrEqual(LEASE_MS);
    expect((await readRecord(client, redisKey(recordKey)))?.owner).toBe('owner-a');
  });

  test('100 concurrent claims of one key: exactly one is claimed, the rest see in_progress', async () => {
    const recordKey = newRecordKey();
    const results = await Promise.all(Array.from({ length: 100 }, (_, i) => claim(recordKey, `owner-${i}`)));
    const claimed = results.filter((r) => r.status === 'claimed');
    expect(claimed).toHaveLength(1);
    expect(results.filter((r) => r.status === 'in_progress')).toHaveLength(99);
    const winner = results.findIndex((r) => r.status === 'claimed');
    expect((await readRecord(client, redisKey(recordKey)))?.owner).toBe(`owner-${winner}`);
  });

  test('complete by the owner: later claims replay the byte-identical result and fingerprint; retention is the TTL', async () => {
    const recordKey = newRecordKey();
    const result = JSON.stringify({ status: 201, body: { note: 'ünïcødé ✓ "quoted"\n\ttab', card: '💳', pad: 'x'.repeat(100_000) } });
    await claimedEpoch(recordKey, 'owner-a');
    expect(await store.complete(recordKey, 'owner-a', result, RETENTION_MS)).toBe(true);
    const replay = await claim(recordKey, 'owner-b', LEASE_MS, 'fp-other');
    expect(replay).toEqual({ status: 'completed', fingerprint: 'fp-1', result, remainingMs: expect.any(Number) });
    expect((replay as { remainingMs: number }).remainingMs).toBeGreaterThan(RETENTION_MS - 5_000);
    if (replay.status !== 'completed') throw new Error('unreachable');
    expect(Buffer.from(replay.result).equals(Buffer.from(result))).toBe(true);
    const pttl = await client.pttl(redisKey(recordKey));
    expect(pttl).toBeGreaterThan(LEASE_MS);
    expect(pttl).toBeLessThanOrEqual(RETENTION_MS);
    // The owner's completion arriving again is stored already: true, and the first result stays.
    expect(await store.complete(recordKey, 'owner-a', 'again', RETENTION_MS)).toBe(true);
    expect((await readRecord(client, redisKey(recordKey)))?.result).toBe(result);
  });

  test('complete, release and renew by a non-owner return false and leave the record as it was', async () => {
    const recordKey = newRecordKey();
    await claimedEpoch(recordKey, 'owner-a');
    const before = await readRecord(client, redisKey(recordKey));
    expect(await store.complete(recordKey, 'intruder', 'stolen', RETENTION_MS)).toBe(false);
    expect(await store.release(recordKey, 'intruder')).toBe(false);
    expect(await store.renew(recordKey, 'intruder', 10 * LEASE_MS)).toBe(false);
    expect(await readRecord(client, redisKey(recordKey))).toEqual(before);
    expect(await client.pttl(redisKey(recordKey))).toBeLessThanOrEqual(LEASE_MS);
  });

  test('complete, release and renew of an absent record return false; release of a completed one too', async () => {
    const absent = newRecordKey();
    expect(await store.complete(absent, 'owner-a', 'r', RETENTION_MS)).toBe(false);
    expect(await store.release(absent, 'owner-a')).toBe(false);
    expect(await store.renew(absent, 'owner-a', LEASE_MS)).toBe(false);
    expect(await client.exists(redisKey(absent))).toBe(0);
    const done = newRecordKey();
    await claimedEpoch(done, 'owner-a');
    await store.complete(done, 'owner-a', 'r', RETENTION_MS);
    const ttl = await client.pttl(redisKey(done));
    expect(await store.release(done, 'owner-a')).toBe(false);
    // A late renewal of the owner's completed record counts as held and changes nothing.
    expect(await store.renew(done, 'owner-a', LEASE_MS)).toBe(true);
    expect((await readRecord(client, redisKey(done)))?.status).toBe('completed');
    expect(await client.pttl(redisKey(done))).toBeGreaterThan(LEASE_MS);
    expect(ttl).toBeGreaterThan(LEASE_MS);
  });

  test("a stale owner whose lease expired cannot complete, release or renew the new owner's claim", async () => {
    const recordKey = newRecordKey();
    await claimedEpoch(recordKey, 'stale', 300);
    await waitUntil(gone(recordKey), 5000, 'the lease to expire');
    await claimedEpoch(recordKey, 'fresh');
    expect(await store.complete(recordKey, 'stale', 'late', RETENTION_MS)).toBe(false);
    expect(await store.release(recordKey, 'stale')).toBe(false);
    expect(await store.renew(recordKey, 'stale', LEASE_MS)).toBe(false);
    expect(await readRecord(client, redisKey(recordKey))).toMatchObject({ status: 'in_progress', owner: 'fresh' });
    expect(await store.complete(recordKey, 'fresh', 'ok', RETENTION_MS)).toBe(true);
  });

  test('release by the owner deletes the record; epochs strictly increase across release and re-claim', async () => {
    const recordKey = newRecordKey();
    const first = await claimedEpoch(recordKey, 'owner-a');
    expect(await store.release(recordKey, 'owner-a')).toBe(true);
    expect(await client.exists(redisKey(recordKey))).toBe(0);
    const second = await claimedEpoch(recordKey, 'owner-b');
    expect(await store.release(recordKey, 'owner-b')).toBe(true);
    const third = await claimedEpoch(recordKey, 'owner-c');
    expect(second).toBeGreaterThan(first);
    expect(third).toBeGreaterThan(second);
  });

  test('epochs strictly increase across lease expiry, and after the epoch counter itself expired', async () => {
    const recordKey = newRecordKey();
    const first = await claimedEpoch(recordKey, 'owner-a', 300);
    await waitUntil(gone(recordKey), 5000, 'the lease to expire');
    const second = await claimedEpoch(recordKey, 'owner-b');
    expect(second).toBeGreaterThan(first);
    // Stand in for retention and the counter's TTL running out. The counter
    // outlives its last epoch by a day, so by then the server clock has
    // passed every epoch it issued; here that takes a millisecond at most.
    await waitUntil(async () => (await serverTimeMs()) > second, 5000, 'the clock to pass the epoch');
    await client.del(redisKey(recordKey), `${redisKey(recordKey)}:epoch`);
    const third = await claimedEpoch(recordKey, 'owner-c');
    expect(third).toBeGreaterThan(second);
  });

  test('a release leaves its epoch in a counter that outlives it by a day, and later claims keep it up to date', async () => {
    const recordKey = newRecordKey();
    const counter = `${redisKey(recordKey)}:epoch`;
    const first = await claimedEpoch(recordKey, 'owner-a');
    expect(await store.release(recordKey, 'owner-a')).toBe(true);
    expect(await client.get(counter)).toBe(String(first));
    expect(await expiresAt(counter)).toBeGreaterThanOrEqual(first + DAY_MS);
    const second = await claimedEpoch(recordKey, 'owner-b');
    expect(second).toBeGreaterThan(first);
    expect(await client.get(counter)).toBe(String(second));
  });

  test('a key never expires before the server clock has passed its epoch: after the clock stepped back, lease, renewal, retention and counter all count from the epoch', async () => {
    const recordKey = newRecordKey();
    const counter = `${redisKey(recordKey)}:epoch`;
    // A counter an hour ahead of the clock: what the clock stepping back an hour leaves.
    const ahead = (await serverTimeMs()) + 60 * 60_000;
    await client.set(counter, String(ahead), 'PX', 60_000);
    const epoch = await claimedEpoch(recordKey, 'owner-a', 5_000);

    expect(epoch).toBe(ahead + 1);
    expect(await expiresAt(redisKey(recordKey))).toBe(epoch + 5_000);
    expect(await expiresAt(counter)).toBe(epoch + DAY_MS);
    expect(await store.renew(recordKey, 'owner-a', 7_000)).toBe(true);
    expect(await expiresAt(redisKey(recordKey))).toBe(epoch + 7_000);
    expect(await store.complete(recordKey, 'owner-a', 'r', 9_000)).toBe(true);
    expect(await expiresAt(redisKey(recordKey))).toBe(epoch + 9_000);
  });

  test('a completion nobody waits for publishes nothing; one a waiter has marked publishes', async () => {
    const listener = await connect();
    const heard: string[] = [];
    try {
      const [quiet, awaited] = [newRecordKey(), newRecordKey()];
      await listener.subscribe(`${redisKey(quiet)}:done`, `${redisKey(awaited)}:done`);
      listener.on('message', (channel: string, message: string) =>
        heard.push(`${channel === `${redisKey(quiet)}:done` ? 'quiet' : 'awaited'} ${message}`),
      );
      await claimedEpoch(quiet, 'owner-a');
      await claimedEpoch(awaited, 'owner-a');
      const waiter = store.waitForChange(awaited, 30_000);
      await waitUntil(async () => (await readRecord(client, redisKey(awaited)))?.w === '1', 5000, 'the waiter to mark the record');
      expect(await store.complete(quiet, 'owner-a', 'r', RETENTION_MS)).toBe(true);
      expect(await store.complete(awaited, 'owner-a', 'r', RETENTION_MS)).toBe(true);
      await waiter;
      // Messages on one connection arrive in order: a marker published last closes the record of what was heard.
      await client.publish(`${redisKey(quiet)}:done`, 'end');
      await waitUntil(() => heard.includes('quiet end'), 5000, 'the marker');
      expect(heard).toEqual(['awaited completed', 'quiet end']);
    } finally {
      listener.disconnect();
    }
  });

  test('renew by the owner extends the lease', async () => {
    const recordKey = newRecordKey();
    await claimedEpoch(recordKey, 'owner-a', 1000);
    expect(await store.renew(recordKey, 'owner-a', 60_000)).toBe(true);
    expect(await client.pttl(redisKey(recordKey))).toBeGreaterThan(50_000);
    expect((await readRecord(client, redisKey(recordKey)))?.status).toBe('in_progress');
  });

  test('a completed record expires after its retention and the key executes again', async () => {
    const recordKey = newRecordKey();
    const first = await claimedEpoch(recordKey, 'owner-a');
    await store.complete(recordKey, 'owner-a', 'r', 300);
    await waitUntil(gone(recordKey), 5000, 'retention to run out');
    expect(await claimedEpoch(recordKey, 'owner-b')).toBeGreaterThan(first);
  });

  test('rejects a non-positive lease or retention before touching Redis', async () => {
    const recordKey = newRecordKey();
    await expect(claim(recordKey, 'owner-a', 0)).rejects.toThrow(RangeError);
    await expect(store.complete(recordKey, 'owner-a', 'r', -1)).rejects.toThrow(RangeError);
    await expect(store.renew(recordKey, 'owner-a', Number.NaN)).rejects.toThrow(RangeError);
    expect(await client.exists(redisKey(recordKey))).toBe(0);
  });

  test('refuses a prefix that would break the hash tag', () => {
    expect(() => new RedisStore({ client, prefix: 'a{b}:' })).toThrow(RangeError);
  });
});

describe('RedisStore writes', () => {
  test('commands sent in one turn of the event loop leave in one socket write, in order, each answered', async () => {
    const socket = (client as unknown as { stream: { _writev?: (chunks: unknown[], cb: () => void) => void } }).stream;
    const writev = jest.spyOn(socket, '_writev' as never);
    const keys = Array.from({ length: 40 }, () => newRecordKey());
    const claims = keys.map((recordKey, i) => claim(recordKey, `owner-${i}`));
    const results = await Promise.all(claims);

    expect(results.map((result) => result.status)).toEqual(keys.map(() => 'claimed'));
    expect(writev).toHaveBeenCalledTimes(1);
    expect((writev.mock.calls[0] as unknown as [unknown[]])[0]).toHaveLength(40);
    writev.mockRestore();
  });
});

describe('RedisStore record formats', () => {
  /** What every operation does with the value at `recordKey`: refuse to read it, and never write over it. */
  async function expectRefused(recordKey: string, foundVersion: string): Promise<void> {
    const key = redisKey(recordKey);
    const [type, dump, ttl] = [await client.type(key), await client.dump(key), await expiresAt(key)];
    const refused = await claim(recordKey, 'me').catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(RecordVersionError);
    expect(isRecordVersionError(refused)).toBe(true);
    expect(refused).toMatchObject({ foundVersion, supportedVersion: 1, httpStatus: 500 });
    await expect(store.waitForChange(recordKey, 30_000)).rejects.toBeInstanceOf(RecordVersionError);
    expect(await store.complete(recordKey, 'other', 'r', RETENTION_MS)).toBe(false);
    expect(await store.renew(recordKey, 'other', LEASE_MS)).toBe(false);
    expect(await store.release(recordKey, 'other')).toBe(false);
    // An operator neither misreads it nor ends it, even by force.
    await expect(inspectRecord(store, { recordKey })).rejects.toMatchObject({ foundVersion, supportedVersion: 1 });
    await expect(releaseRecord(store, { recordKey }, { force: true })).rejects.toBeInstanceOf(RecordVersionError);
    expect(await client.type(key)).toBe(type);
    expect(await client.dump(key)).toEqual(dump);
    expect(await expiresAt(key)).toBe(ttl);
  }

  test('the record is one string that starts with its format version', async () => {
    const recordKey = newRecordKey();
    const epoch = await claimedEpoch(recordKey, 'owner-a');
    expect(await client.type(redisKey(recordKey))).toBe('string');
    expect(await client.get(redisKey(recordKey))).toBe(`1\np4:fp-17:owner-a${epoch}\n`);
    expect(await store.complete(recordKey, 'owner-a', 'the answer', RETENTION_MS)).toBe(true);
    expect(await client.get(redisKey(recordKey))).toBe(`1\nc4:fp-17:owner-a${epoch}\nthe answer`);
  });

  test('a fingerprint and an owner with any bytes (separators, newlines, digits, UTF-8) read back as written', async () => {
    const other = newRecordKey();
    const [fingerprint, owner] = ['12:\n3:fp\n✓', '7:öwner\n:'];
    const first = await store.claim({ recordKey: other, fingerprint, owner, leaseMs: LEASE_MS });
    expect(first.status).toBe('claimed');
    expect(await store.claim({ recordKey: other, fingerprint: 'x', owner: 'y', leaseMs: LEASE_MS })).toMatchObject({
      status: 'in_progress',
      fingerprint,
    });
    expect(await store.complete(other, owner, 'r\n1:', RETENTION_MS)).toBe(true);
    expect(await store.claim({ recordKey: other, fingerprint: 'x', owner: 'y', leaseMs: LEASE_MS })).toMatchObject({
      status: 'completed',
      fingerprint,
      result: 'r\n1:',
    });
  });

  test('a record of an unknown format version is refused by claim and wait, and left as it is', async () => {
    const recordKey = newRecordKey();
    // A completed record as a later release might write it.
    await client.set(redisKey(recordKey), '2\nc{"fp":"fp-1","answer":"x"}', 'PX', RETENTION_MS);
    await expectRefused(recordKey, '2');
  });

  test('a record from before format versions (a hash) is refused as carrying none', async () => {
    const recordKey = newRecordKey();
    await client.hset(redisKey(recordKey), { status: 'completed', fp: 'fp-1', owner: 'o', epoch: '1', result: '"r"' });
    await client.pexpire(redisKey(recordKey), RETENTION_MS);
    await expectRefused(recordKey, 'none');
    const refused = (await claim(recordKey, 'me').catch((error: unknown) => error)) as Error;
    expect(refused.message).toContain('carries no format version');
  });

  test('the coordinator answers such a record with the error, even failing open: no replay, no second execution', async () => {
    await expectCoordinatorRefuses(store, async (recordKey) => {
      await client.set(redisKey(recordKey), '9\nanything', 'PX', RETENTION_MS);
    });
  });

  test.each([
    ['a length overwritten', (v: string) => `${v.slice(0, 3)}x${v.slice(4)}`],
    ['a value cut to its version', () => '1\n'],
    ['a fingerprint length past the end', (v: string) => v.replace(/^1\nc4:/, '1\nc9999:')],
    ['no line after the epoch', (v: string) => v.slice(0, v.indexOf('\n', 2))],
  ])('a damaged record (%s) is refused as damaged, never as an outage that fails open', async (_damage, damage) => {
    const recordKey = newRecordKey();
    await claimedEpoch(recordKey, 'owner-a');
    expect(await store.complete(recordKey, 'owner-a', 'the answer', RETENTION_MS)).toBe(true);
    const value = (await client.get(redisKey(recordKey)))!;
    await client.set(redisKey(recordKey), damage(value), 'KEEPTTL');
    await expectRefused(recordKey, 'damaged');
    const refused = (await claim(recordKey, 'me').catch((error: unknown) => error)) as Error;
    expect(refused.message).toContain('is damaged');
  });

  test('the coordinator answers a damaged record with the error, even failing open: no replay, no second execution', async () => {
    await expectCoordinatorRefuses(store, async (recordKey) => {
      await client.set(redisKey(recordKey), '1\ncx:fp', 'PX', RETENTION_MS);
    });
  });
});
