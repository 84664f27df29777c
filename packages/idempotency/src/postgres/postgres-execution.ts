import { Pool, type PoolClient, type PoolConfig } from 'pg';
import type { Execution } from '../execution';

/**
 * The execution context of a transactional operation on `PostgresStore`.
 *
 * @public
 */
export type PostgresExecution = Execution & { transaction: PoolClient };

/**
 * The `PostgresStore` transaction an execution runs in: write the side effect
 * through it, and it commits with the record's completion or not at all.
 * Throws when there is none: the operation's policy lacks
 * `transactional: true`, the call is outside an execution, or it runs
 * unprotected under fail-open (then write through your own pool, knowingly).
 *
 * @example
 * @Post()
 * @Idempotent('payments.charge', { transactional: true })
 * async charge(@Body() order: ChargeDto, @CurrentExecution() execution?: Execution) {
 *   const tx = postgresTransaction(execution);
 *   const { rows } = await tx.query(
 *     'INSERT INTO charges (order_id, account, amount_cents) VALUES ($1, $2, $3) RETURNING id',
 *     [order.orderId, order.account, order.amountCents],
 *   );
 *   return { chargeId: rows[0].id, ...order, status: 'captured' }; // stored in the same COMMIT
 * }
 *
 * @public
 */
export function postgresTransaction(execution: Pick<Execution, 'transaction'> | undefined): PoolClient {
  const transaction = execution?.transaction as PoolClient | undefined;
  if (!transaction || typeof transaction.query !== 'function') {
    throw new TypeError('No PostgresStore transaction: run this inside an execution of an operation with `transactional: true`');
  }
  return transaction;
}

/**
 * A `pg` pool that fails fast while the database is unreachable: a
 * connection attempt gives up after 2 s and a query after 5 s instead of
 * hanging the request, so the coordinator can answer 503. Errors of idle
 * connections (the server restarted) are ignored: the pool drops the
 * connection and the next caller gets a fresh one, or the error.
 *
 * @example
 * const pool = createPostgresPool(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
 *
 * @public
 */
export function createPostgresPool(connectionString: string, options: PoolConfig = {}): Pool {
  const pool = new Pool({ connectionString, connectionTimeoutMillis: 2_000, query_timeout: 5_000, max: 10, ...options });
  pool.on('error', () => undefined);
  return pool;
}
