import { createPostgresPool, migrate } from '@idempotency-chain/idempotency/postgres';
import { connect, type ChannelWrapper } from 'amqp-connection-manager';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { randomBytes, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Pool, PoolClient } from 'pg';
import { CHARGE_PATTERN, deadLetterQueue } from './charge-queue.js';
import { DATABASE_URL, freePort, PAYMENTS_TOKEN } from '../payments.test-support.js';

/**
 * payments consuming charge requests from RabbitMQ, on PostgreSQL, killed
 * (SIGKILL) between the ledger insert and the completion of the record: the
 * broker redelivers the message to the restarted payments, and the ledger
 * holds one charge. payments runs as a process of its own, so the kill is a
 * real one: its build, `dist/main.js`, which `npm test` makes first (`pretest`).
 */
const AMQP_URL = process.env.AMQP_URL || 'amqp://guest:guest@127.0.0.1:5672';
/** The built entry: `npm test` builds it first (`pretest`). */
const MAIN = join(import.meta.dirname, '..', '..', 'dist', 'main.js');
/** Short, so that the redelivery takes over the dead consumer's record soon. */
const LEASE_MS = 2_000;
/** Bounds on a process booting and on the redelivery being settled, on a loaded 2-core machine. */
const BOUND_MS = 30_000;
/** Held by the test: a completion waits for it (see the trigger), the moment to kill payments. */
const COMPLETION_LOCK = 4242;
vi.setConfig({ testTimeout: 4 * BOUND_MS, hookTimeout: 4 * BOUND_MS });

const database = `payments_crash_${randomBytes(6).toString('hex')}`;
const databaseUrl = Object.assign(new URL(DATABASE_URL), { pathname: `/${database}` }).toString();
const queue = `test.payments.charges.${randomUUID()}`;
/** Names the test's own connections to the database, apart from those of payments. */
const TEST_APPLICATION = 'payments-crash-test';

let admin: Pool;
let db: Pool;
let broker: ReturnType<typeof connect>;
let channel: ChannelWrapper;
const children = new Set<ChildProcess>();

beforeAll(async () => {
  admin = createPostgresPool(DATABASE_URL);
  await admin.query(`CREATE DATABASE ${database}`);
  db = createPostgresPool(databaseUrl, { application_name: TEST_APPLICATION });
  await migrate(db);
  // The fault point: a completion waits here for the test's lock, after the action's insert.
  await db.query(`
    CREATE FUNCTION hold_completion() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN PERFORM pg_advisory_xact_lock(${COMPLETION_LOCK}); RETURN NEW; END $$;
    CREATE TRIGGER hold_completion BEFORE UPDATE ON idempotency_records
      FOR EACH ROW WHEN (NEW.status = 'completed') EXECUTE FUNCTION hold_completion()`);
  broker = connect([AMQP_URL]);
  channel = broker.createChannel({ json: false });
  await channel.waitForConnect();
});

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await channel?.deleteQueue(queue).catch(() => undefined);
  await channel?.deleteQueue(deadLetterQueue(queue)).catch(() => undefined);
  await channel?.close();
  await broker?.close();
  await db?.end();
  await admin?.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  await admin?.end();
});

/** Start payments (`dist/main.js`) consuming the test's queue on the test's database; resolves once it answers `/health`. */
async function startPayments(): Promise<ChildProcess> {
  const port = await freePort();
  const env = {
    PAYMENTS_TOKEN,
    PORT: String(port),
    LOG_LEVEL: 'silent',
    IDEMPOTENCY_STORE: 'postgres',
    DATABASE_URL: databaseUrl,
    CHARGE_TRANSPORT: 'amqp',
    AMQP_URL,
    CHARGE_QUEUE: queue,
    IDEMPOTENCY_LEASE_MS: String(LEASE_MS),
  };
  const child = spawn(process.execPath, [MAIN], { env: { ...process.env, ...env }, stdio: 'ignore' });
  children.add(child);
  child.once('exit', () => children.delete(child));
  await until(
    async () =>
      (await fetch(`http://127.0.0.1:${port}/health`)
        .then((r) => r.ok)
        .catch(() => false)) || undefined,
    'payments to answer /health',
  );
  return child;
}

/** Poll `probe` until it returns something, for at most `BOUND_MS`. */
async function until<T>(probe: () => Promise<T | undefined>, what: string): Promise<T> {
  const deadline = Date.now() + BOUND_MS;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

const count = async (sql: string, params: unknown[] = []) => Number((await db.query(sql, params)).rows[0].n);

test('killed between the ledger insert and the completion, the redelivered message is charged once', async () => {
  const order = { orderId: `o-${randomUUID()}`, account: 'acct-7', amountCents: 500 };
  const holder: PoolClient = await db.connect();
  await holder.query('SELECT pg_advisory_lock($1)', [COMPLETION_LOCK]);
  const first = await startPayments();
  const headers = { authorization: `Bearer ${PAYMENTS_TOKEN}`, 'idempotency-key': `"${randomUUID()}"` };
  const message = Buffer.from(JSON.stringify({ pattern: CHARGE_PATTERN, data: order }));
  await channel.sendToQueue(queue, message, { persistent: true, headers } as Parameters<ChannelWrapper['sendToQueue']>[2]);

  // The charge is written and the completion waits on the lock: kill payments there.
  await until(
    async () =>
      (await count(
        `SELECT count(*) AS n FROM pg_stat_activity WHERE datname = $1 AND wait_event_type = 'Lock' AND wait_event = 'advisory'`,
        [database],
      )) > 0 || undefined,
    'the completion to wait',
  );
  first.kill('SIGKILL');
  await once(first, 'exit');
  // The server ends the dead process's connections (as it would at their next read): an open transaction rolls back.
  await db.query(`SELECT pg_terminate_backend(pid, 10000) FROM pg_stat_activity WHERE datname = $1 AND application_name <> $2`, [
    database,
    TEST_APPLICATION,
  ]);
  await db.query('DROP TRIGGER hold_completion ON idempotency_records');
  await holder.query('SELECT pg_advisory_unlock($1)', [COMPLETION_LOCK]);
  holder.release();

  // The broker redelivers the unacked message to the restarted payments, which takes the record over once the lease ran out.
  await startPayments();
  await until(
    async () => (await count(`SELECT count(*) AS n FROM idempotency_records WHERE status = 'completed'`)) > 0 || undefined,
    'the redelivery to complete',
  );
  expect(await count('SELECT count(*) AS n FROM payments_ledger WHERE order_id = $1', [order.orderId])).toBe(1);
});
