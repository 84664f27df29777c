import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import { IdempotencyCoordinator } from '../coordinator';
import { createPostgresPool, PostgresStore, postgresTransaction } from '.';
import { createTestSchema, DATABASE_URL, type TestSchema } from '../../test/support/postgres';
import { sleep, within } from '../../test/support/async';

/**
 * A database whose default isolation is SERIALIZABLE (here the session's, set
 * at connection): the execution's transaction still runs at READ COMMITTED,
 * so the renewals committed while the action runs do not fail its completion;
 * the store's own statements that race each other (claims, a completion and
 * its renewals) run again when PostgreSQL rolls one back to serialize them.
 */
const LEASE_MS = 1_500;
/** Several leases: the heartbeat renews the record a few times after the action's first statement. */
const ACTION_MS = 4_500;

let db: TestSchema;
let pool: Pool;
let store: PostgresStore;

beforeAll(async () => {
  db = await createTestSchema('idem_isolation');
  await db.pool.query(`CREATE TABLE "${db.schema}".ledger (id serial PRIMARY KEY, order_id text NOT NULL)`);
  pool = createPostgresPool(DATABASE_URL, { options: '-c default_transaction_isolation=serializable' });
  store = new PostgresStore({ pool, schema: db.schema, pollIntervalMs: 60_000, sweepIntervalMs: 0, ownsPool: true });
});

afterAll(async () => {
  await store.close();
  await db.drop();
});

test('on a SERIALIZABLE default, an action longer than the heartbeat completes and its write commits', async () => {
  expect((await pool.query('SHOW transaction_isolation')).rows[0].transaction_isolation).toBe('serializable');
  const coordinator = new IdempotencyCoordinator({ service: 'payments', store, defaults: { transactional: true, leaseMs: LEASE_MS } });
  const orderId = randomUUID();
  const result = await within(
    coordinator.run({ operation: 'payments.charge', key: orderId, fingerprint: 'fp' }, async (execution) => {
      // The first statement: at REPEATABLE READ or SERIALIZABLE the snapshot would be taken here.
      await postgresTransaction(execution).query(`INSERT INTO "${db.schema}".ledger (order_id) VALUES ($1)`, [orderId]);
      await sleep(ACTION_MS);
      return { statusCode: 201, body: 'charged' };
    }),
    ACTION_MS + 20_000,
    'the long action',
  );
  expect(result.value.body).toBe('charged');
  expect((await db.pool.query(`SELECT count(*)::int AS n FROM "${db.schema}".ledger WHERE order_id = $1`, [orderId])).rows[0].n).toBe(1);
});

test('on a SERIALIZABLE default, concurrent claims of one key: one claims, the rest see it held, none fails to serialize', async () => {
  const recordKey = `serializable:${randomUUID()}`;
  const claims = await Promise.allSettled(
    Array.from({ length: 16 }, (_, i) => store.claim({ recordKey, fingerprint: 'fp', owner: `owner-${i}`, leaseMs: 30_000 })),
  );
  const refused = claims.filter((c) => c.status === 'rejected').map((c) => String(c.reason));
  expect(refused).toEqual([]);
  const statuses = claims.map((c) => (c as PromiseFulfilledResult<{ status: string }>).value.status).sort();
  expect(statuses.filter((s) => s === 'claimed')).toHaveLength(1);
  expect(statuses.filter((s) => s === 'in_progress')).toHaveLength(15);
});

test('on a SERIALIZABLE default, concurrent takeovers of a lapsed lease: one claims, none fails to serialize', async () => {
  const recordKey = `serializable:${randomUUID()}`;
  expect((await store.claim({ recordKey, fingerprint: 'fp', owner: 'gone', leaseMs: 50 })).status).toBe('claimed');
  await sleep(200);
  const claims = await Promise.allSettled(
    Array.from({ length: 16 }, (_, i) => store.claim({ recordKey, fingerprint: 'fp', owner: `owner-${i}`, leaseMs: 30_000 })),
  );
  const refused = claims.filter((c) => c.status === 'rejected').map((c) => String(c.reason));
  expect(refused).toEqual([]);
  const statuses = claims.map((c) => (c as PromiseFulfilledResult<{ status: string }>).value.status);
  expect(statuses.filter((s) => s === 'claimed')).toHaveLength(1);
});

test('on a SERIALIZABLE default, a completion racing its own renewals commits', async () => {
  const recordKey = `serializable:${randomUUID()}`;
  expect((await store.claim({ recordKey, fingerprint: 'fp', owner: 'me', leaseMs: 30_000 })).status).toBe('claimed');
  const renewals = Array.from({ length: 8 }, () => store.renew(recordKey, 'me', 30_000));
  const [completed, ...renewed] = await Promise.allSettled([store.complete(recordKey, 'me', 'answer', 60_000), ...renewals]);
  expect(completed).toEqual({ status: 'fulfilled', value: true });
  expect(renewed.filter((r) => r.status === 'rejected')).toEqual([]);
});
