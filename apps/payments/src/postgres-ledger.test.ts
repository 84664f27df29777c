import { isIdempotencyError, StoreUnavailableError } from '@idempotency-chain/idempotency';
import { createPostgresPool } from '@idempotency-chain/idempotency/postgres';
import { UnreachableError } from './unreachable.js';
import { randomUUID } from 'node:crypto';
import { DatabaseError, type Pool } from 'pg';
import { PostgresLedger } from './postgres-ledger.js';
import { freePort } from './payments.test-support.js';

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
/** The test's own schema: its ledger table never meets the app's. */
const schema = `test_ledger_${randomUUID().replace(/-/g, '')}`;
const inSchema = (name: string) => createPostgresPool(DATABASE_URL, { options: `-c search_path=${name}` });
const entry = () => ({ orderId: `o-${randomUUID()}`, account: 'acct', amountCents: 500 });

let admin: Pool;
let pool: Pool;
let ledger: PostgresLedger;

beforeAll(async () => {
  admin = createPostgresPool(DATABASE_URL);
  await admin.query(`CREATE SCHEMA ${schema}`);
  pool = inSchema(schema);
  ledger = await new PostgresLedger(pool).open();
});
afterAll(async () => {
  await pool?.end();
  await admin?.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await admin?.end();
});

describe('PostgresLedger when the database does not answer', () => {
  it('answers a write cut off with its connection as the 503 store-unavailable error', async () => {
    const transaction = await pool.connect();
    // The server's goodbye arrives as an 'error' event of the checked-out client.
    transaction.on('error', () => undefined);
    try {
      await transaction.query('BEGIN');
      const { rows } = await transaction.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      // Waits (up to 10 s) until the backend is gone: the write below cannot run first.
      await admin.query('SELECT pg_terminate_backend($1, 10000)', [rows[0]!.pid]);
      const order = entry();
      const failed = await ledger.charge(order, { recordKey: randomUUID(), epoch: 1, transaction }).catch((error: unknown) => error);
      expect(isIdempotencyError(failed, StoreUnavailableError)).toBe(true);
      expect((failed as Error).cause).toBeInstanceOf(Error);
      expect(await ledger.chargesOf(order.orderId)).toEqual([]);
    } finally {
      transaction.release(true);
    }
  });

  it('answers writes and reads to a database that refuses connections with 503, and fails its opening naming it', async () => {
    const port = await freePort();
    const closed = createPostgresPool(`postgres://postgres:secret@127.0.0.1:${port}/postgres`);
    try {
      const unreachable = new PostgresLedger(closed);
      const write = await unreachable.charge(entry()).catch((error: unknown) => error);
      expect(isIdempotencyError(write, StoreUnavailableError)).toBe(true);
      expect(isIdempotencyError(await unreachable.chargesOf('o-1').catch((error: unknown) => error), StoreUnavailableError)).toBe(true);
      const opening = unreachable.open();
      await expect(opening).rejects.toBeInstanceOf(UnreachableError);
      await expect(opening).rejects.toThrow(
        `cannot reach PostgreSQL at postgres://postgres:***@127.0.0.1:${port}/postgres: connect ECONNREFUSED 127.0.0.1:${port}`,
      );
    } finally {
      await closed.end();
    }
  });

  it('throws what the database answered as it is: an error of the query, not an outage', async () => {
    const empty = `${schema}_empty`;
    await admin.query(`CREATE SCHEMA ${empty}`);
    const noTable = inSchema(empty);
    try {
      const failed = await new PostgresLedger(noTable).charge(entry()).catch((error: unknown) => error);
      expect(failed).toBeInstanceOf(DatabaseError);
      expect((failed as DatabaseError).code).toBe('42P01'); // undefined_table
    } finally {
      await noTable.end();
      await admin.query(`DROP SCHEMA ${empty} CASCADE`);
    }
  });
});

describe('PostgresLedger of a transactional store', () => {
  it("refuses a fenced charge that comes without the execution's transaction, and writes nothing", async () => {
    const transactional = new PostgresLedger(pool, { transactional: true });
    const order = entry();
    await expect(transactional.charge(order, { recordKey: randomUUID(), epoch: 1 })).rejects.toThrow(TypeError);
    expect(await transactional.chargesOf(order.orderId)).toEqual([]);
  });

  it('writes a fenced charge through the transaction: invisible before its COMMIT, gone with its ROLLBACK', async () => {
    const transactional = new PostgresLedger(pool, { transactional: true });
    const order = entry();
    const transaction = await pool.connect();
    try {
      await transaction.query('BEGIN');
      await transactional.charge(order, { recordKey: randomUUID(), epoch: 1, transaction });
      expect(await transactional.chargesOf(order.orderId)).toEqual([]);
      await transaction.query('ROLLBACK');
    } finally {
      transaction.release();
    }
    expect(await transactional.chargesOf(order.orderId)).toEqual([]);
  });
});
