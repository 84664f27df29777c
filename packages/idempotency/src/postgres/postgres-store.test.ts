import { randomBytes } from 'node:crypto';
import { PostgresStore } from '.';
import { isIdempotencyError, RecordVersionError } from '../errors';
import { inspectRecord, releaseRecord } from '../operator-records';
import { expectCoordinatorRefuses } from '../record-version.test-support';
import { createTestSchema, type TestSchema } from '../../test/support/postgres';
import { eventually, track, within } from '../../test/support/async';

let db: TestSchema;
let store: PostgresStore;

beforeAll(async () => {
  db = await createTestSchema('idem_store');
  store = new PostgresStore({ pool: db.pool, schema: db.schema, pollIntervalMs: 60_000, sweepIntervalMs: 0 });
});

afterAll(async () => {
  await store.close();
  await db.drop();
});

const newKey = () => randomBytes(16).toString('hex');
const row = async (recordKey: string) =>
  (await db.pool.query(`SELECT status, epoch::text AS epoch FROM "${db.schema}".idempotency_records WHERE store_key = $1`, [recordKey]))
    .rows[0] as { status: string; epoch: string } | undefined;
const claimed = async (target: PostgresStore, recordKey: string, owner: string, leaseMs = 60_000): Promise<number> => {
  const result = await target.claim({ recordKey, fingerprint: 'fp', owner, leaseMs });
  if (result.status !== 'claimed') throw new Error(`expected a claim, got ${result.status}`);
  return result.epoch;
};
const listeners = async () =>
  Number(
    (await db.pool.query(`SELECT count(*) AS n FROM pg_stat_activity WHERE query = $1`, [`LISTEN "idempotency:${db.schema}"`])).rows[0].n,
  );

describe('PostgresStore records and fences', () => {
  test('a claim’s epoch comes from the server clock in ms; release keeps the row as the fence, and the next epoch exceeds it', async () => {
    const recordKey = newKey();
    const before = Date.now();
    const first = await claimed(store, recordKey, 'a');
    expect(first).toBeGreaterThanOrEqual(before - 5_000); // server and test clocks are one machine's
    expect(await store.release(recordKey, 'a')).toBe(true);
    expect(await row(recordKey)).toEqual({ status: 'released', epoch: String(first) });
    const second = await claimed(store, recordKey, 'b');
    expect(second).toBeGreaterThan(first);
    // A fence ahead of the clock (claims within one ms, a clock that stepped back) still orders the next claim.
    await db.pool.query(`UPDATE "${db.schema}".idempotency_records SET epoch = $2, expires_at = clock_timestamp() WHERE store_key = $1`, [
      recordKey,
      String(second + 1_000_000),
    ]);
    expect(await claimed(store, recordKey, 'c')).toBe(second + 1_000_001);
  });

  test('the sweep deletes rows that ended more than fenceRetentionMs ago, and nothing live', async () => {
    const sweeping = new PostgresStore({ pool: db.pool, schema: db.schema, sweepIntervalMs: 0, fenceRetentionMs: 200 });
    try {
      const [ended, live, completed] = [newKey(), newKey(), newKey()];
      await claimed(sweeping, ended, 'a');
      await sweeping.release(ended, 'a');
      await claimed(sweeping, live, 'a');
      await claimed(sweeping, completed, 'a');
      await sweeping.complete(completed, 'a', '"r"', 60_000);
      await eventually(async () => (await sweeping.sweep(), (await row(ended)) === undefined), 'the ended row to be swept');
      expect(await row(live)).toMatchObject({ status: 'in_progress' });
      expect(await row(completed)).toMatchObject({ status: 'completed' });
    } finally {
      await sweeping.close();
    }
  });
});

describe('PostgresStore record formats', () => {
  test('a row of an unknown format is refused by claim and wait, and never taken over, completed or swept', async () => {
    const recordKey = newKey();
    // A row as a later release might write it: format 7, in progress, its lease long over.
    await db.pool.query(
      `INSERT INTO "${db.schema}".idempotency_records (store_key, status, fingerprint, owner, epoch, result, expires_at, format)
       VALUES ($1, 'in_progress', 'fp', 'other', 1, NULL, clock_timestamp() - interval '1 hour', 7)`,
      [recordKey],
    );
    const refused = await store.claim({ recordKey, fingerprint: 'fp', owner: 'me', leaseMs: 60_000 }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(RecordVersionError);
    expect(isIdempotencyError(refused, RecordVersionError)).toBe(true);
    expect(refused).toMatchObject({ foundVersion: '7', supportedVersion: 1, httpStatus: 500 });
    expect((refused as Error).message).toContain('format version 7');
    await expect(store.waitForChange(recordKey, 30_000)).rejects.toBeInstanceOf(RecordVersionError);
    expect(await store.complete(recordKey, 'other', '"r"', 60_000)).toBe(false);
    expect(await store.renew(recordKey, 'other', 60_000)).toBe(false);
    expect(await store.release(recordKey, 'other')).toBe(false);
    // An operator neither misreads it nor ends it, even by force.
    await expect(inspectRecord(store, { recordKey })).rejects.toMatchObject({ foundVersion: '7', supportedVersion: 1 });
    await expect(releaseRecord(store, { recordKey }, { force: true })).rejects.toBeInstanceOf(RecordVersionError);
    const sweeping = new PostgresStore({ pool: db.pool, schema: db.schema, sweepIntervalMs: 0, fenceRetentionMs: 1 });
    try {
      await sweeping.sweep();
    } finally {
      await sweeping.close();
    }
    const { rows } = await db.pool.query(
      `SELECT status, owner, epoch::text AS epoch, format FROM "${db.schema}".idempotency_records WHERE store_key = $1`,
      [recordKey],
    );
    expect(rows).toEqual([{ status: 'in_progress', owner: 'other', epoch: '1', format: 7 }]);
  });

  test('the coordinator answers a row of an unknown format with the error, even failing open: no replay, no second execution', async () => {
    await expectCoordinatorRefuses(store, async (recordKey) => {
      await db.pool.query(
        `INSERT INTO "${db.schema}".idempotency_records (store_key, status, fingerprint, owner, epoch, result, expires_at, format)
         VALUES ($1, 'completed', 'fp', 'other', 1, 'not json', clock_timestamp() + interval '1 hour', 2)`,
        [recordKey],
      );
    });
  });

  test('rows this store writes carry its format', async () => {
    const recordKey = newKey();
    await claimed(store, recordKey, 'a');
    const { rows } = await db.pool.query(`SELECT format FROM "${db.schema}".idempotency_records WHERE store_key = $1`, [recordKey]);
    expect(rows).toEqual([{ format: 1 }]);
  });
});

describe('PostgresStore waiters', () => {
  test('100 waiters on 10 keys share one LISTEN connection and are all woken by the completions', async () => {
    const keys = Array.from({ length: 10 }, newKey);
    for (const recordKey of keys) await claimed(store, recordKey, 'holder');
    const waiters = keys.flatMap((recordKey) => Array.from({ length: 10 }, () => track(store.waitForChange(recordKey, 30_000))));
    const settled = Promise.all(waiters.map((w) => w.promise));
    await eventually(async () => (await listeners()) === 1, 'the LISTEN');
    expect(waiters.some((w) => w.settled)).toBe(false);
    for (const recordKey of keys) expect(await store.complete(recordKey, 'holder', '"r"', 60_000)).toBe(true);
    await within(settled, 3_000, 'the woken waiters');
    expect(await listeners()).toBe(1);
  });

  test('a LISTEN connection that dies wakes its waiters, and the next waiter listens on a new one', async () => {
    const recordKey = newKey();
    await claimed(store, recordKey, 'holder');
    const waiter = track(store.waitForChange(recordKey, 30_000));
    await eventually(async () => (await listeners()) === 1, 'the LISTEN');
    await db.pool.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query = $1`, [`LISTEN "idempotency:${db.schema}"`]);
    await within(waiter.promise, 3_000, 'the waiter of the dead connection');
    const next = track(store.waitForChange(recordKey, 30_000));
    await eventually(async () => (await listeners()) === 1, 'a new LISTEN');
    expect(await store.complete(recordKey, 'holder', '"r"', 60_000)).toBe(true);
    await within(next.promise, 3_000, 'the next waiter');
  });

  test('close() resolves pending waiters, ends its LISTEN connection, and refuses calls afterwards', async () => {
    const baseline = await listeners();
    const closing = new PostgresStore({ pool: db.pool, schema: db.schema, pollIntervalMs: 60_000 });
    const recordKey = newKey();
    await claimed(closing, recordKey, 'holder');
    const waiter = track(closing.waitForChange(recordKey, 30_000));
    await eventually(async () => (await listeners()) === baseline + 1, 'the LISTEN');
    await closing.close();
    await within(waiter.promise, 3_000, 'the waiter of the closed store');
    await eventually(async () => (await listeners()) === baseline, 'the LISTEN connection to end');
    await expect(closing.claim({ recordKey, fingerprint: 'fp', owner: 'x', leaseMs: 1_000 })).rejects.toThrow('closed');
  });
});
