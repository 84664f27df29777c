import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { RedisStore, redisRecordKey } from './redis-store';
import { IdempotencyCoordinator } from '../coordinator';
import { isIdempotencyError, KeyReusedError, RecordVersionError } from '../errors';
import { requestFingerprint } from '../fingerprint';
import { inspectRecord, releaseRecord } from '../operator-records';
import { expectCoordinatorRefuses } from '../record-version.test-support';
import { HEADER_BYTES, RECORD_FORMAT, RENEWAL_BYTES } from './scripts';
import { connect, deleteKeys, keptOwner, newRecordKey, readRecord, uniquePrefix, waitUntil } from './redis.test-support';

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

const redisKey = (recordKey: string) => redisRecordKey(recordKey, prefix);
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
      fp: store.keptFingerprint('fp-1'),
      owner: keptOwner('owner-a'),
      epoch: String(epoch),
    });
    // A key never released needs no counter: the path of nearly every request writes one key.
    expect(await client.exists(`${redisKey(recordKey)}:epoch`)).toBe(0);
    const pttl = await client.pttl(redisKey(recordKey));
    expect(pttl).toBeGreaterThan(0);
    expect(pttl).toBeLessThanOrEqual(LEASE_MS);
  });

  test('a second claim sees in_progress with the first fingerprint (as kept) and leaseRemainingMs <= leaseMs', async () => {
    const recordKey = newRecordKey();
    await claimedEpoch(recordKey, 'owner-a');
    const second = await claim(recordKey, 'owner-b', LEASE_MS, 'fp-other');
    expect(second).toEqual({ status: 'in_progress', fingerprint: store.keptFingerprint('fp-1'), leaseRemainingMs: expect.any(Number) });
    if (second.status !== 'in_progress') throw new Error('unreachable');
    expect(second.leaseRemainingMs).toBeGreaterThan(0);
    expect(second.leaseRemainingMs).toBeLessThanOrEqual(LEASE_MS);
    expect((await readRecord(client, redisKey(recordKey)))?.owner).toBe(keptOwner('owner-a'));
  });

  test('100 concurrent claims of one key: exactly one is claimed, the rest see in_progress', async () => {
    const recordKey = newRecordKey();
    const results = await Promise.all(Array.from({ length: 100 }, (_, i) => claim(recordKey, `owner-${i}`)));
    const claimed = results.filter((r) => r.status === 'claimed');
    expect(claimed).toHaveLength(1);
    expect(results.filter((r) => r.status === 'in_progress')).toHaveLength(99);
    const winner = results.findIndex((r) => r.status === 'claimed');
    expect((await readRecord(client, redisKey(recordKey)))?.owner).toBe(keptOwner(`owner-${winner}`));
  });

  test('complete by the owner: later claims replay the byte-identical result and (kept) fingerprint; retention is the TTL', async () => {
    const recordKey = newRecordKey();
    const result = JSON.stringify({ status: 201, body: { note: 'ünïcødé ✓ "quoted"\n\ttab', card: '💳', pad: 'x'.repeat(100_000) } });
    await claimedEpoch(recordKey, 'owner-a');
    expect(await store.complete(recordKey, 'owner-a', result, RETENTION_MS)).toBe(true);
    const replay = await claim(recordKey, 'owner-b', LEASE_MS, 'fp-other');
    expect(replay).toEqual({ status: 'completed', fingerprint: store.keptFingerprint('fp-1'), result, remainingMs: expect.any(Number) });
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
    expect(await readRecord(client, redisKey(recordKey))).toMatchObject({ status: 'in_progress', owner: keptOwner('fresh') });
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
    const socket = (client as unknown as { stream: { _writev: (chunks: unknown[], cb: () => void) => void } }).stream;
    const writev = vi.spyOn(socket, '_writev');
    const keys = Array.from({ length: 40 }, () => newRecordKey());
    const claims = keys.map((recordKey, i) => claim(recordKey, `owner-${i}`));
    const results = await Promise.all(claims);

    expect(results.map((result) => result.status)).toEqual(keys.map(() => 'claimed'));
    expect(writev).toHaveBeenCalledTimes(1);
    expect(writev.mock.calls[0]?.[0]).toHaveLength(40);
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
    expect(isIdempotencyError(refused, RecordVersionError)).toBe(true);
    expect(refused).toMatchObject({ foundVersion, supportedVersion: RECORD_FORMAT, httpStatus: 500 });
    await expect(store.waitForChange(recordKey, 30_000)).rejects.toBeInstanceOf(RecordVersionError);
    expect(await store.complete(recordKey, 'other', 'r', RETENTION_MS)).toBe(false);
    expect(await store.renew(recordKey, 'other', LEASE_MS)).toBe(false);
    expect(await store.release(recordKey, 'other')).toBe(false);
    // An operator neither misreads it nor ends it, even by force.
    await expect(inspectRecord(store, { recordKey })).rejects.toMatchObject({ foundVersion, supportedVersion: RECORD_FORMAT });
    await expect(releaseRecord(store, { recordKey }, { force: true })).rejects.toBeInstanceOf(RecordVersionError);
    expect(await client.type(key)).toBe(type);
    expect(await client.dump(key)).toEqual(dump);
    expect(await expiresAt(key)).toBe(ttl);
  }

  test('the record is one string: a 33-byte header (version, state, 16 bytes of fingerprint, 8 of owner, 6 of epoch), then the answer', async () => {
    const recordKey = createHash('sha256').update('a record').digest('hex');
    const fingerprint = createHash('sha256').update('a request').digest('hex');
    const key = redisKey(recordKey);
    // The key: the record key's 32 bytes in base64url as the hash tag, 45 characters after the prefix.
    expect(key).toBe(`${prefix}{${Buffer.from(recordKey, 'hex').toString('base64url')}}`);
    expect(key.length - prefix.length).toBe(45);
    const claimed = await store.claim({ recordKey, fingerprint, owner: 'owner-a', leaseMs: LEASE_MS });
    if (claimed.status !== 'claimed') throw new Error(`expected claimed, got ${claimed.status}`);
    expect(await client.type(key)).toBe('string');
    const header = Buffer.concat([
      Buffer.from('2\np', 'latin1'),
      Buffer.from(createHash('sha256').update(fingerprint).digest('hex').slice(0, 32), 'hex'),
      Buffer.from(keptOwner('owner-a'), 'hex'),
      Buffer.alloc(6),
    ]);
    header.writeUIntBE(claimed.epoch, 27, 6);
    expect(HEADER_BYTES).toBe(33);
    // In progress, a tail follows the header: when it was claimed or last renewed (server ms, 6 bytes; the
    // claim's epoch on a key never claimed before), and the heartbeat the claim named (4 bytes; none here).
    const inProgress = (await client.getBuffer(key))!;
    expect(inProgress.length).toBe(RENEWAL_BYTES);
    expect(inProgress.subarray(0, HEADER_BYTES)).toEqual(header);
    expect(inProgress.readUIntBE(HEADER_BYTES, 6)).toBe(claimed.epoch);
    expect(inProgress.readUInt32BE(HEADER_BYTES + 6)).toBe(0);
    const answer = '{"statusCode":201,"body":"✓"}';
    expect(await store.complete(recordKey, 'owner-a', answer, RETENTION_MS)).toBe(true);
    const completed = (await client.getBuffer(key))!;
    expect(completed.length).toBe(HEADER_BYTES + Buffer.byteLength(answer));
    expect(completed.subarray(0, HEADER_BYTES)).toEqual(Buffer.concat([Buffer.from('2\nc', 'latin1'), header.subarray(3)]));
    expect(completed.subarray(HEADER_BYTES).toString('utf8')).toBe(answer);
    // A retry of the request gets its own fingerprint back; the record keeps 32 hex digits of its SHA-256.
    expect(await store.claim({ recordKey, fingerprint, owner: 'owner-b', leaseMs: LEASE_MS })).toMatchObject({
      fingerprint,
      result: answer,
    });
    const kept = createHash('sha256').update(fingerprint).digest('hex').slice(0, 32);
    expect(store.keptFingerprint(fingerprint)).toBe(kept);
    expect((await store.inspect(recordKey))?.fingerprint).toBe(kept);
  });

  test('any fingerprint and owner (separators, newlines, NUL, UTF-8) is told from another: same request, same owner, or not', async () => {
    const other = newRecordKey();
    const [fingerprint, owner] = ['12:\n3:fp\n\0✓', '7:öwner\n:\0'];
    expect((await store.claim({ recordKey: other, fingerprint, owner, leaseMs: LEASE_MS })).status).toBe('claimed');
    expect(await store.claim({ recordKey: other, fingerprint, owner: 'y', leaseMs: LEASE_MS })).toMatchObject({
      status: 'in_progress',
      fingerprint,
    });
    const kept = store.keptFingerprint(fingerprint);
    expect(kept).toMatch(/^[0-9a-f]{32}$/);
    expect(await store.claim({ recordKey: other, fingerprint: 'x', owner: 'y', leaseMs: LEASE_MS })).toMatchObject({
      status: 'in_progress',
      fingerprint: kept,
    });
    // What a claim reports of another request's record is never taken for a request's own fingerprint, even
    // a request whose fingerprint is those 32 hex digits.
    expect(store.keptFingerprint(kept)).not.toBe(kept);
    const spelled = await store.claim({ recordKey: other, fingerprint: kept, owner: 'y', leaseMs: LEASE_MS });
    expect(spelled).toMatchObject({ status: 'in_progress' });
    expect((spelled as { fingerprint: string }).fingerprint).not.toBe(kept);
    expect(await store.complete(other, 'y', 'not mine', RETENTION_MS)).toBe(false);
    expect(await store.complete(other, owner, 'r\n1:\0', RETENTION_MS)).toBe(true);
    expect(await store.claim({ recordKey: other, fingerprint, owner: 'y', leaseMs: LEASE_MS })).toMatchObject({
      status: 'completed',
      fingerprint,
      result: 'r\n1:\0',
    });
    expect(await store.claim({ recordKey: other, fingerprint: 'x', owner: 'y', leaseMs: LEASE_MS })).toMatchObject({
      status: 'completed',
      fingerprint: kept,
    });
  });

  const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
  test.each([
    [
      '64 hex digits that differ in their second half only',
      sha256('POST /c').slice(0, 32) + sha256('amount 10').slice(0, 32),
      sha256('POST /c').slice(0, 32) + sha256('amount 99').slice(0, 32),
    ],
    [
      '32 hex digits, and 64 that start with them',
      sha256('POST /c').slice(0, 32),
      sha256('POST /c').slice(0, 32) + sha256('amount 10').slice(0, 32),
    ],
    ['a fingerprint, and its SHA-256 in hex', 'amount=10', sha256('amount=10')],
  ])(
    "a caller's own fingerprints (%s) are told apart: the second request is refused, never given the first one's answer",
    async (_what, first, second) => {
      // RunRequest.fingerprint is any string (`fingerprintOf` in NestJS): none of its parts stands for the whole.
      const coordinator = new IdempotencyCoordinator({ service: 'format', store, replayCache: false });
      const key = `k-${randomUUID()}`;
      await coordinator.run({ operation: 'charge', key, fingerprint: first }, async () => ({ charged: 'first' }));
      let ran = false;
      const reused = coordinator.run({ operation: 'charge', key, fingerprint: second }, async () => {
        ran = true;
      });
      await expect(reused).rejects.toBeInstanceOf(KeyReusedError);
      expect(ran).toBe(false);
      expect(store.keptFingerprint(first)).not.toBe(store.keptFingerprint(second));
    },
  );

  test("a record key and the key spelling its SHA-256 in hex are two records: neither gets the other's answer", async () => {
    // A store used without the coordinator, with keys its callers choose: one caller's key, and another's that
    // happens to be (or was made to be) the first one's hash in hex.
    const alice = `tenant-alice:${newRecordKey()}`;
    const bob = createHash('sha256').update(alice).digest('hex');
    expect(redisRecordKey(bob, prefix)).not.toBe(redisRecordKey(alice, prefix));
    expect(await claimedEpoch(alice, 'owner-a')).toBeGreaterThan(0);
    expect(await store.complete(alice, 'owner-a', 'alice-answer', RETENTION_MS)).toBe(true);
    await expect(claim(bob, 'owner-b')).resolves.toMatchObject({ status: 'claimed' });
  });

  test('a record key that is not SHA-256 in hex is hashed to 32 bytes for its tag; a prefix with a brace is refused', async () => {
    const recordKey = 'not-a-hash {with braces}';
    const key = redisRecordKey(recordKey, prefix);
    expect(key).toBe(`${prefix}{=${createHash('sha256').update(recordKey).digest('base64url')}}`);
    expect(await claimedEpoch(recordKey, 'owner-a')).toBeGreaterThan(0);
    expect(await client.exists(key)).toBe(1);
    expect(redisRecordKey(newRecordKey())).toMatch(/^idem:\{[A-Za-z0-9_-]{43}\}$/);
    expect(() => redisRecordKey(recordKey, 'a{b}:')).toThrow(RangeError);
    expect(() => redisRecordKey('')).toThrow(RangeError);
  });

  test('an encrypted answer is bound to the fingerprint the record keeps: replayed to its request, opened by inspectRecord', async () => {
    const encryption = { keys: [{ id: 'k1', key: randomBytes(32) }] };
    const coordinator = new IdempotencyCoordinator({ service: 'format', store, replayCache: false, encryption });
    const request = {
      operation: 'charge',
      key: `k-${randomUUID()}`,
      fingerprint: requestFingerprint({ method: 'POST', path: '/c', body: 1 }),
    };
    await coordinator.run(request, async () => ({ charged: true }));
    expect(await coordinator.run(request, async () => ({ charged: 'twice' }))).toMatchObject({ value: { charged: true }, replayed: true });
    const recordKey = coordinator.recordKey(request.operation, '', request.key);
    const found = await inspectRecord(store, { recordKey }, { body: true, encryption });
    expect(found).toMatchObject({
      fingerprint: store.keptFingerprint(request.fingerprint),
      answer: { status: 'decrypted', body: '{"charged":true}' },
    });
    const other = { ...request, fingerprint: requestFingerprint({ method: 'POST', path: '/c', body: 2 }) };
    await expect(coordinator.run(other, async () => ({ charged: 'other' }))).rejects.toBeInstanceOf(KeyReusedError);
  });

  test('a record of format 1, as earlier 0.x releases wrote it, is refused as version 1 and left as it is', async () => {
    const recordKey = newRecordKey();
    await client.set(
      redisKey(recordKey),
      `1\nc64:${'a'.repeat(64)}38:${'o'.repeat(38)}1764000000000\n{"statusCode":201}`,
      'PX',
      RETENTION_MS,
    );
    await expectRefused(recordKey, '1');
    const refused = (await claim(recordKey, 'me').catch((error: unknown) => error)) as Error;
    expect(refused.message).toContain('format version 1');
  });

  test('a record of an unknown format version is refused by claim and wait, and left as it is', async () => {
    const recordKey = newRecordKey();
    // A completed record as a later release might write it.
    await client.set(redisKey(recordKey), '3\nc{"fp":"fp-1","answer":"x"}', 'PX', RETENTION_MS);
    await expectRefused(recordKey, '3');
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
    ['its state byte overwritten', (v: Buffer) => Buffer.concat([v.subarray(0, 2), Buffer.from('x'), v.subarray(3)])],
    ['a value cut to its version', () => Buffer.from('2\n')],
    ['a header cut short', (v: Buffer) => v.subarray(0, HEADER_BYTES - 1)],
  ])('a damaged record (%s) is refused as damaged, never as an outage that fails open', async (_damage, damage) => {
    const recordKey = newRecordKey();
    await claimedEpoch(recordKey, 'owner-a');
    expect(await store.complete(recordKey, 'owner-a', 'the answer', RETENTION_MS)).toBe(true);
    const value = (await client.getBuffer(redisKey(recordKey)))!;
    await client.set(redisKey(recordKey), damage(value), 'KEEPTTL');
    await expectRefused(recordKey, 'damaged');
    const refused = (await claim(recordKey, 'me').catch((error: unknown) => error)) as Error;
    expect(refused.message).toContain('is damaged');
  });

  test.each([
    ['at 2^48, past which no epoch fits', async (counter: string) => void (await client.set(counter, String(2 ** 48), 'PX', RETENTION_MS))],
    ['of another type', async (counter: string) => void (await client.hset(counter, { epoch: '1' }))],
  ])('an epoch counter %s (written by hand) refuses the claim, even failing open: no execution', async (_what, plant) => {
    await expectCoordinatorRefuses(store, async (recordKey) => plant(`${redisKey(recordKey)}:epoch`));
    const recordKey = newRecordKey();
    await plant(`${redisKey(recordKey)}:epoch`);
    await expect(claim(recordKey, 'me')).rejects.toMatchObject({
      foundVersion: 'counter',
      message: expect.stringContaining('epoch counter'),
    });
    expect(await client.exists(redisKey(recordKey))).toBe(0);
  });

  test('the coordinator answers a damaged record with the error, even failing open: no replay, no second execution', async () => {
    await expectCoordinatorRefuses(store, async (recordKey) => {
      await client.set(redisKey(recordKey), '2\ncx:fp', 'PX', RETENTION_MS);
    });
  });
});
