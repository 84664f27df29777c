import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import { claimSilent } from '../holder-liveness.test-support';
import { inspectRecord, releaseRecord } from '../operator-records';
import { describeOperatorRecords } from '../operator-records.test-support';
import { RedisStore, redisRecordKey } from './redis-store';
import { HEADER_BYTES } from './scripts';
import { connect, deleteKeys, uniquePrefix } from './redis.test-support';

const prefix = uniquePrefix();
let client: Redis;
let store: RedisStore;

beforeAll(async () => {
  client = await connect();
  // Polls too seldom to matter: only a release's publish wakes a waiter in time.
  store = new RedisStore({ client, prefix, pollIntervalMs: 60_000 });
});

afterAll(async () => {
  await store.close();
  await deleteKeys(client, prefix);
  await client.quit();
});

describeOperatorRecords('Redis', () => store);

describe('operator release of a record claimed by an earlier release (Redis)', () => {
  test('an in-progress record without the renewal tail is read as before, its holder counted alive: refused without force', async () => {
    const recordKey = createHash('sha256').update(`tail-less ${Date.now()}`).digest('hex');
    const key = redisRecordKey(recordKey, prefix);
    // Silent by its tail; cut the tail off, as a claim by a release before it wrote none.
    const epoch = await claimSilent(store, { recordKey, fingerprint: 'fp', owner: 'old-holder', leaseMs: 60_000 });
    const header = (await client.getBuffer(key))!.subarray(0, HEADER_BYTES);
    await client.set(key, header, 'KEEPTTL');

    const found = await inspectRecord(store, { recordKey });
    expect(found).toMatchObject({ status: 'in_progress', epoch, holder: 'alive' });
    expect(found.lastRenewalMsAgo).toBeUndefined();
    expect(await releaseRecord(store, { recordKey })).toMatchObject({ outcome: 'refused_holder_alive', epochBefore: epoch });
    // Its holder renews as before, and the record stays as that release wrote it.
    expect(await store.renew(recordKey, 'old-holder', 60_000)).toBe(true);
    expect((await client.getBuffer(key))!.length).toBe(HEADER_BYTES);
    expect(await releaseRecord(store, { recordKey }, { force: true })).toMatchObject({
      outcome: 'forced_holder_alive',
      epochBefore: epoch,
    });
  });
});
