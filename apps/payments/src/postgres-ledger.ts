import type { OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { DatabaseError, type Pool, type PoolClient } from 'pg';
import { ledgerUnavailable, newCharge, type Charge, type ChargeEntry, type Fence, type Ledger } from './ledger.js';
import { UnreachableError } from './unreachable.js';

/** Options of {@link PostgresLedger}. */
export interface PostgresLedgerOptions {
  /** Create the table at boot (see `open`) and end the pool on shutdown. Default `false`. */
  ownsPool?: boolean;
  /**
   * The records complete in a transaction of the store (`transactional: true`
   * on PostgreSQL): a fenced charge must then come with that transaction,
   * and one without it is refused. Written through the pool, it would
   * commit on its own, and a crash before the completion would leave a
   * charge the retry writes again. Default `false`.
   */
  transactional?: boolean;
}

/**
 * A ledger in PostgreSQL, beside the idempotency records. A charge written
 * through the execution's transaction commits with the record's completion
 * or not at all, so it needs no keying or fencing of its own: a process
 * killed between the insert and the commit leaves neither behind. A
 * statement the database did not answer is `ledgerUnavailable` (503).
 */
export class PostgresLedger implements Ledger, OnModuleInit, OnApplicationShutdown {
  private readonly ownsPool: boolean;
  private readonly transactional: boolean;

  constructor(
    private readonly pool: Pool,
    options: PostgresLedgerOptions = {},
  ) {
    this.ownsPool = options.ownsPool ?? false;
    this.transactional = options.transactional ?? false;
  }

  /** Open the ledger of the pool it owns; a database that does not answer fails the boot, naming it. */
  async onModuleInit(): Promise<void> {
    if (this.ownsPool) await this.open();
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.ownsPool) await this.pool.end();
  }

  /**
   * Create the ledger's table once, at start-up.
   *
   * @throws UnreachableError naming the database when it does not answer.
   */
  async open(): Promise<this> {
    try {
      await this.pool.query(`CREATE TABLE IF NOT EXISTS payments_ledger (
        charge_id text PRIMARY KEY, order_id text NOT NULL, account text NOT NULL,
        amount_cents integer NOT NULL, epoch bigint NOT NULL, at timestamptz NOT NULL)`);
      await this.pool.query('CREATE INDEX IF NOT EXISTS payments_ledger_order ON payments_ledger (order_id)');
    } catch (error) {
      if (databaseAnswered(error)) throw error;
      throw new UnreachableError('PostgreSQL', this.pool.options.connectionString ?? "the pool's database", error);
    }
    return this;
  }

  /** @throws TypeError when the ledger is `transactional` and `fence` comes without its transaction. */
  async charge(entry: ChargeEntry, fence?: Fence): Promise<Charge> {
    if (this.transactional && fence && !fence.transaction) {
      throw new TypeError(
        "A fenced charge on a transactional store must be written through the execution's transaction (Fence.transaction)",
      );
    }
    const charge = newCharge(entry, fence);
    const client = (fence?.transaction as PoolClient | undefined) ?? this.pool;
    await answered(
      client.query('INSERT INTO payments_ledger (charge_id, order_id, account, amount_cents, epoch, at) VALUES ($1, $2, $3, $4, $5, $6)', [
        charge.chargeId,
        charge.orderId,
        charge.account,
        charge.amountCents,
        charge.epoch,
        charge.at,
      ]),
    );
    return charge;
  }

  async chargesOf(orderId: string): Promise<Charge[]> {
    type Row = { charge_id: string; order_id: string; account: string; amount_cents: number; epoch: string; at: Date };
    const { rows } = await answered(this.pool.query<Row>('SELECT * FROM payments_ledger WHERE order_id = $1 ORDER BY at', [orderId]));
    return rows.map((row) => ({
      chargeId: row.charge_id,
      orderId: row.order_id,
      account: row.account,
      amountCents: row.amount_cents,
      epoch: Number(row.epoch),
      at: row.at.toISOString(),
    }));
  }
}

/** `query`'s result; when the database did not answer it, `ledgerUnavailable`: the write may or may not have happened. */
async function answered<T>(query: Promise<T>): Promise<T> {
  try {
    return await query;
  } catch (error) {
    throw databaseAnswered(error) ? error : ledgerUnavailable(error);
  }
}

/**
 * True when the database answered `error` itself: a `DatabaseError`, other
 * than the classes that mean the connection is gone or was cut (08,
 * connection exception; 57, operator intervention: shutdown, a cancelled or
 * timed-out statement). Anything else - refused, reset, terminated, a
 * connection or query timeout of the pool - it did not answer.
 */
function databaseAnswered(error: unknown): boolean {
  return error instanceof DatabaseError && !/^(08|57)/.test(error.code ?? '');
}
