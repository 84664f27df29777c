import { randomUUID } from 'node:crypto';
import { latch } from '../../test/support/async';
import { createTestSchema, type TestSchema } from '../../test/support/postgres';
import { IdempotencyCoordinator } from '../coordinator';
import { isIdempotencyError, LeaseLostError } from '../errors';
import { releaseRecord } from '../operator-records';
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
    expect((await releaseRecord(store, { recordKey }, { reason: 'stuck' })).outcome).toBe('released');
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
