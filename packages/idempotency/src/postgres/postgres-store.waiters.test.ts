import type { Pool } from 'pg';
import { createPostgresPool } from './postgres-execution';
import { sleep, within } from '../../test/support/async';
import { duplicatesOfAHeldKey } from '../../test/support/held-key';
import { createTestSchema, DATABASE_URL, type TestSchema } from '../../test/support/postgres';
import { Recorder } from '../../test/support/recorder';
import { IdempotencyCoordinator, type RunRequest } from '../coordinator';
import { InFlightError, isIdempotencyError } from '../errors';
import { PostgresStore } from './postgres-store';

const DUPLICATES = 2_000;
const request: RunRequest = { operation: 'payments.charge', key: 'the-key', fingerprint: 'fp' };

/** Count every statement sent through `pool`: what the store costs the database. */
function counted(pool: Pool): { pool: Pool; statements: () => number } {
  let statements = 0;
  const query = pool.query.bind(pool) as (...args: unknown[]) => unknown;
  (pool as { query: unknown }).query = (...args: unknown[]) => ((statements += 1), query(...args));
  return { pool, statements: () => statements };
}

let db: TestSchema;

beforeAll(async () => {
  db = await createTestSchema('idem_waiters');
});

afterAll(async () => {
  await db.drop();
});

test('at a 3 s lease, 1,000 waiters on one held key cost PostgreSQL one re-check per lease, not one each: under 200 statements/s', async () => {
  // A burst of 2,000 claims queues for the pool's connections longer than the fail-fast default allows: counted here, not timed.
  const main = counted(createPostgresPool(DATABASE_URL, { max: 12, connectionTimeoutMillis: 60_000 }));
  const store = new PostgresStore({ pool: main.pool, schema: db.schema, sweepIntervalMs: 0, ownsPool: true });
  const recorder = new Recorder();
  const coordinator = new IdempotencyCoordinator({
    service: 'payments',
    store,
    observer: recorder,
    replayCache: false,
    defaults: { leaseMs: 3_000 },
  });
  try {
    const { holder, duplicates, release } = await duplicatesOfAHeldKey(coordinator, recorder, request, DUPLICATES);
    // Each waiter's wait ends with the holder's lease, which its heartbeat (on the store's own renewal pool) keeps renewing.
    const [before, started] = [main.statements(), performance.now()];
    await sleep(9_000); // three leases
    const perSecond = (main.statements() - before) / ((performance.now() - started) / 1000);
    release();
    await within(holder, 10_000, 'the holder');
    const answers = await within(duplicates, 30_000, 'the duplicates');
    // One waiter per key claims again per lease, and one read per poll re-checks: a few a second. One claim per waiter per lease: ~330.
    expect(perSecond).toBeLessThan(200);
    expect(answers.filter((answer) => isIdempotencyError(answer, InFlightError))).toHaveLength(DUPLICATES - 1_000);
    expect(answers.filter((answer) => (answer as { replayed?: boolean }).replayed === true)).toHaveLength(1_000);
  } finally {
    await store.close();
  }
}, 90_000);
