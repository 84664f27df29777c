import { randomUUID } from 'node:crypto';
import { IdempotencyCoordinator } from '../coordinator';
import { isIdempotencyError, LeaseLostError, StoreUnavailableError } from '../errors';
import { PostgresStore, postgresTransaction } from '.';
import { createTestSchema, type TestSchema } from '../../test/support/postgres';
import { eventually, latch, within } from '../../test/support/async';
import { Recorder } from '../../test/support/recorder';

/**
 * Transactional completion for real: the action's ledger insert and the
 * record's completion commit together, or neither survives.
 */
let db: TestSchema;
let store: PostgresStore;
let coordinator: IdempotencyCoordinator;

beforeAll(async () => {
  db = await createTestSchema('idem_tx');
  await db.pool.query(`CREATE TABLE "${db.schema}".ledger (id serial PRIMARY KEY, order_id text NOT NULL, amount_cents int NOT NULL)`);
  store = new PostgresStore({ pool: db.pool, schema: db.schema, pollIntervalMs: 10_000 });
  coordinator = new IdempotencyCoordinator({ service: 'payments', store, defaults: { transactional: true } });
});

afterAll(async () => {
  await store.close();
  await db.drop();
});

const charge = (key: string) => ({ operation: 'payments.charge', key, fingerprint: 'fp' });
const ledgerRows = async (orderId: string) =>
  Number((await db.pool.query(`SELECT count(*) AS n FROM "${db.schema}".ledger WHERE order_id = $1`, [orderId])).rows[0].n);
const recordStatus = async (key: string) =>
  (
    await db.pool.query(`SELECT status FROM "${db.schema}".idempotency_records WHERE store_key = $1`, [
      coordinator.recordKey('payments.charge', '', key),
    ])
  ).rows[0]?.status as string | undefined;

describe('PostgresStore transactional completion', () => {
  test('the ledger insert and the completion become visible together, at one COMMIT; a retry replays', async () => {
    const key = randomUUID();
    const orderId = `order-${key}`;
    const inserted = latch();
    const release = latch();
    const run = coordinator.run(charge(key), async (execution) => {
      const tx = postgresTransaction(execution);
      const { rows } = await tx.query(`INSERT INTO "${db.schema}".ledger (order_id, amount_cents) VALUES ($1, 500) RETURNING id`, [
        orderId,
      ]);
      inserted.open();
      await release.promise;
      return { statusCode: 201, body: { chargeId: rows[0].id as number } };
    });
    await inserted.promise;
    // Inserted, not committed: no other connection sees the row, and the record is still in progress.
    expect(await ledgerRows(orderId)).toBe(0);
    expect(await recordStatus(key)).toBe('in_progress');
    release.open();
    const result = await run;
    expect(await ledgerRows(orderId)).toBe(1);
    expect(await recordStatus(key)).toBe('completed');
    expect(await coordinator.run(charge(key), async () => Promise.reject(new Error('must not run')))).toMatchObject({
      replayed: true,
      value: result.value,
    });
  });

  test('a completion refused by the owner check (another owner took the key) rolls the ledger insert back: LeaseLostError', async () => {
    const key = randomUUID();
    const orderId = `order-${key}`;
    const recordKey = coordinator.recordKey('payments.charge', '', key);
    const error = await coordinator
      .run(charge(key), async (execution) => {
        await postgresTransaction(execution).query(`INSERT INTO "${db.schema}".ledger (order_id, amount_cents) VALUES ($1, 500)`, [
          orderId,
        ]);
        // Meanwhile this holder's lease ends and another attempt claims the key.
        await db.pool.query(`UPDATE "${db.schema}".idempotency_records SET expires_at = clock_timestamp() WHERE store_key = $1`, [
          recordKey,
        ]);
        expect((await store.claim({ recordKey, fingerprint: 'fp', owner: 'usurper', leaseMs: 60_000 })).status).toBe('claimed');
        return { statusCode: 201 };
      })
      .catch((e: unknown) => e);
    expect(isIdempotencyError(error, LeaseLostError)).toBe(true);
    expect(await ledgerRows(orderId)).toBe(0);
    expect(await recordStatus(key)).toBe('in_progress'); // the usurper's claim, untouched
  });

  test('a connection that dies between the side effect and the commit leaves neither; the retry after the lease charges once', async () => {
    const key = randomUUID();
    const orderId = `order-${key}`;
    const request = { ...charge(key), policy: { leaseMs: 500 } };
    const error = await coordinator
      .run(request, async (execution) => {
        const tx = postgresTransaction(execution);
        await tx.query(`INSERT INTO "${db.schema}".ledger (order_id, amount_cents) VALUES ($1, 500)`, [orderId]);
        // The crash: the server ends this backend mid-transaction, as when the process holding it dies.
        const { rows } = await tx.query('SELECT pg_backend_pid() AS pid');
        await db.pool.query('SELECT pg_terminate_backend($1)', [rows[0].pid]);
        return { statusCode: 201 };
      })
      .catch((e: unknown) => e);
    expect(isIdempotencyError(error, StoreUnavailableError)).toBe(true);
    expect(await ledgerRows(orderId)).toBe(0);
    expect(await recordStatus(key)).toBe('in_progress');

    let executions = 0;
    const retry = await within(
      coordinator.run(request, async (execution) => {
        executions += 1;
        await postgresTransaction(execution).query(`INSERT INTO "${db.schema}".ledger (order_id, amount_cents) VALUES ($1, 500)`, [
          orderId,
        ]);
        return { statusCode: 201 };
      }),
      5_000,
      'the retry after the lease',
    );
    expect(retry.replayed).toBe(false);
    expect(executions).toBe(1);
    expect(await ledgerRows(orderId)).toBe(1);
    expect(await recordStatus(key)).toBe('completed');
  });

  test('an action that throws, or returns a result that is not final, leaves no ledger row and releases the key', async () => {
    const key = randomUUID();
    const orderId = `order-${key}`;
    const insert = (execution: Parameters<typeof postgresTransaction>[0]) =>
      postgresTransaction(execution).query(`INSERT INTO "${db.schema}".ledger (order_id, amount_cents) VALUES ($1, 500)`, [orderId]);
    await expect(
      coordinator.run(charge(key), async (execution) => {
        await insert(execution);
        throw new Error('provider timeout');
      }),
    ).rejects.toThrow('provider timeout');
    expect(await coordinator.run(charge(key), async (execution) => (await insert(execution), { statusCode: 503 }))).toMatchObject({
      replayed: false,
      value: { statusCode: 503 },
    });
    expect(await ledgerRows(orderId)).toBe(0);
    expect(await recordStatus(key)).toBe('released');
  });

  test('a waiter is woken by the NOTIFY of the COMMIT, and replays the committed result', async () => {
    const key = randomUUID();
    const gate = latch();
    let started = false;
    const recorder = new Recorder();
    const coordinator = new IdempotencyCoordinator({ service: 'payments', store, defaults: { transactional: true }, observer: recorder });
    const winner = coordinator.run({ ...charge(key), policy: { leaseMs: 60_000 } }, async (execution) => {
      started = true;
      await postgresTransaction(execution).query(`INSERT INTO "${db.schema}".ledger (order_id, amount_cents) VALUES ($1, 500)`, [key]);
      await gate.promise;
      return { statusCode: 201, body: 'committed' };
    });
    await eventually(() => started, 'the winner to start');
    const waiter = coordinator.run(charge(key), async () => Promise.reject(new Error('must not run')));
    await eventually(() => recorder.claims >= 2, 'the waiter to find the key in progress');
    gate.open();
    const [, answer] = await within(Promise.all([winner, waiter]), 5_000, 'the winner and its waiter');
    expect(answer).toMatchObject({ replayed: true, waited: true, value: { body: 'committed' } });
  });

  test('postgresTransaction refuses an execution that has no transaction', () => {
    expect(() => postgresTransaction(undefined)).toThrow(TypeError);
    expect(() => postgresTransaction({ transaction: undefined })).toThrow(TypeError);
  });
});
