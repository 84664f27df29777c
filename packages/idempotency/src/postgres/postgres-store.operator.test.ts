import { randomUUID } from 'node:crypto';
import { latch } from '../../test/support/async';
import { createTestSchema, type TestSchema } from '../../test/support/postgres';
import { IdempotencyCoordinator } from '../coordinator';
import { isIdempotencyError, LeaseLostError } from '../errors';
import { claimSilent } from '../holder-liveness.test-support';
import { inspectRecord, releaseRecord } from '../operator-records';
import { describeOperatorRecords } from '../operator-records.test-support';
import { postgresTransaction } from './postgres-execution';
import { PostgresStore } from './postgres-store';

let db: TestSchema;
let store: PostgresStore;

beforeAll(async () => {
  db = await createTestSchema('idem_operator');
  await db.pool.query(`CREATE TABLE "${db.schema}".ledger (id serial PRIMARY KEY, order_id text NOT NULL)`);
  // Polls too seldom to matter: only a release's NOTIFY wakes a waiter in time.
  store = new PostgresStore({ pool: db.pool, schema: db.schema, pollIntervalMs: 60_000, sweepIntervalMs: 0 });
});

afterAll(async () => {
  await store.close();
  await db.drop();
});

describeOperatorRecords('PostgreSQL', () => store);

describe('operator release of a transactional execution (PostgreSQL)', () => {
  test('the holder’s completion after the release is refused, and its side effect rolls back with it', async () => {
    const coordinator = new IdempotencyCoordinator({ service: 'payments', store, defaults: { transactional: true } });
    const orderId = `order-${randomUUID()}`;
    const inserted = latch<string>();
    const proceed = latch();
    const run = coordinator.run({ operation: 'payments.charge', key: orderId, fingerprint: 'fp' }, async (execution) => {
      await postgresTransaction(execution).query(`INSERT INTO "${db.schema}".ledger (order_id) VALUES ($1)`, [orderId]);
      inserted.open(execution.recordKey);
      await proceed.promise;
      return { statusCode: 201 };
    });
    const recordKey = await inserted.promise;
    expect((await releaseRecord(store, { recordKey }, { reason: 'stuck', force: true })).outcome).toBe('forced_holder_alive');
    proceed.open();
    expect(
      isIdempotencyError(
        await run.then(
          () => undefined,
          (error: unknown) => error,
        ),
        LeaseLostError,
      ),
    ).toBe(true);
    const { rows } = await db.pool.query(`SELECT count(*)::int AS n FROM "${db.schema}".ledger WHERE order_id = $1`, [orderId]);
    expect(rows[0].n).toBe(0);
  });
});

describe('operator release of a row claimed by an earlier release (PostgreSQL)', () => {
  /** The record's holder is one the store cannot tell: alive, with no renewal; released only with force. */
  async function expectAliveWithoutRenewal(recordKey: string, epoch: number): Promise<void> {
    const found = await inspectRecord(store, { recordKey });
    expect(found).toMatchObject({ status: 'in_progress', epoch, holder: 'alive' });
    expect(found.lastRenewalMsAgo).toBeUndefined();
    expect(found.heartbeatMs).toBeUndefined();
    expect(await releaseRecord(store, { recordKey })).toMatchObject({ outcome: 'refused_holder_alive', epochBefore: epoch });
    expect(await releaseRecord(store, { recordKey }, { force: true })).toMatchObject({
      outcome: 'forced_holder_alive',
      epochBefore: epoch,
    });
  }

  test('a row without renewed_at and heartbeat_ms is read as before, its holder counted alive: refused without force', async () => {
    const recordKey = `old-${randomUUID()}`;
    const epoch = await claimSilent(store, { recordKey, fingerprint: 'fp', owner: 'old-holder', leaseMs: 60_000 });
    // What a claim by a release before migration 3 leaves: neither column set.
    await db.pool.query(`UPDATE "${db.schema}".idempotency_records SET renewed_at = NULL, heartbeat_ms = NULL WHERE store_key = $1`, [
      recordKey,
    ]);

    await expectAliveWithoutRenewal(recordKey, epoch);
  });

  test('a row an earlier release took over keeps the previous holder’s renewal: its live holder counts alive, refused without force', async () => {
    const recordKey = `rolling-${randomUUID()}`;
    await claimSilent(store, { recordKey, fingerprint: 'fp-a', owner: 'new-holder', leaseMs: 60_000 });
    await db.pool.query(`UPDATE "${db.schema}".idempotency_records SET expires_at = clock_timestamp() WHERE store_key = $1`, [recordKey]);
    // What the previous release's claim writes when it takes the row over, and its renewals after: all but renewed_at
    // and heartbeat_ms, which stay the silent previous holder's.
    const { rows } = await db.pool.query<{ epoch: string }>(
      `UPDATE "${db.schema}".idempotency_records
          SET status = 'in_progress', fingerprint = 'fp-b', owner = 'old-holder', result = NULL,
              epoch = greatest(epoch + 1, floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint),
              expires_at = clock_timestamp() + interval '60 seconds'
        WHERE store_key = $1 RETURNING epoch::text`,
      [recordKey],
    );
    const epoch = Number(rows[0]?.epoch);

    await expectAliveWithoutRenewal(recordKey, epoch);

    // This release's claim on that row writes both columns: its holder never inherits the old ones.
    expect(await store.claim({ recordKey, fingerprint: 'fp-c', owner: 'next', leaseMs: 60_000, heartbeatMs: 60_000 })).toMatchObject({
      status: 'claimed',
    });
    expect(await inspectRecord(store, { recordKey })).toMatchObject({
      holder: 'alive',
      heartbeatMs: 60_000,
      lastRenewalMsAgo: expect.any(Number),
    });
  });
});
