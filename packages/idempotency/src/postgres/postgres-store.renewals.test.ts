import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import { IdempotencyCoordinator } from '../coordinator';
import { createPostgresPool, PostgresStore, postgresTransaction } from '.';
import { createTestSchema, DATABASE_URL, type TestSchema } from '../../test/support/postgres';
import { sleep, within } from '../../test/support/async';

/**
 * Renewals do not queue behind the actions they protect: a transactional
 * action holds one of the pool's connections for as long as it runs, and
 * here every connection is held, for several leases.
 */
const POOL_SIZE = 3;
const LEASE_MS = 1_500;
/** More than three leases: only renewals keep the holders' leases alive until they complete. */
const ACTION_MS = 5_000;

let db: TestSchema;
let pool: Pool;
let store: PostgresStore;

beforeAll(async () => {
  db = await createTestSchema('idem_renewals');
  pool = createPostgresPool(DATABASE_URL, { max: POOL_SIZE });
  store = new PostgresStore({ pool, schema: db.schema, pollIntervalMs: 60_000, sweepIntervalMs: 0, ownsPool: true });
});

afterAll(async () => {
  await store.close();
  await db.drop();
});

test('as many slow transactional actions as the pool has connections all complete: renewals have connections of their own', async () => {
  const coordinator = new IdempotencyCoordinator({ service: 'payments', store, defaults: { transactional: true, leaseMs: LEASE_MS } });
  const slowCharge = () =>
    coordinator.run({ operation: 'payments.charge', key: randomUUID(), fingerprint: 'fp' }, async (execution) => {
      await postgresTransaction(execution).query('SELECT 1');
      await sleep(ACTION_MS);
      return { statusCode: 201, body: 'charged' };
    });
  const outcomes = await within(Promise.allSettled(Array.from({ length: POOL_SIZE }, slowCharge)), ACTION_MS + 20_000, 'the slow actions');
  expect(outcomes.map((outcome) => (outcome.status === 'fulfilled' ? outcome.value.value.body : String(outcome.reason)))).toEqual(
    Array(POOL_SIZE).fill('charged'),
  );
});

test("close() ends the renewals' pool the store created", async () => {
  const application = `renewals-${randomUUID()}`;
  const callers = createPostgresPool(DATABASE_URL, { application_name: application });
  const own = new PostgresStore({ pool: callers, schema: db.schema, sweepIntervalMs: 0 });
  const recordKey = randomUUID();
  await own.claim({ recordKey, fingerprint: 'fp', owner: 'a', leaseMs: 60_000 });
  expect(await own.renew(recordKey, 'a', 60_000)).toBe(true);
  const renewals = async () =>
    Number(
      (
        await db.pool.query(
          `SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = $1 AND query LIKE 'UPDATE %SET expires_at%'`,
          [application],
        )
      ).rows[0].n,
    );
  expect(await renewals()).toBe(1);
  await own.close();
  await within(
    (async () => {
      while ((await renewals()) > 0) await sleep(20);
    })(),
    10_000,
    'the renewal connection to end',
  );
  // The caller's pool is not the store's to end.
  expect((await callers.query('SELECT 1 AS one')).rows[0].one).toBe(1);
  await callers.end();
});
