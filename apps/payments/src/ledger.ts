import { StoreUnavailableError } from '@idempotency-chain/idempotency';
import { randomUUID } from 'node:crypto';

/** One line of the ledger: money taken from an account. */
export interface Charge {
  chargeId: string;
  orderId: string;
  account: string;
  amountCents: number;
  /** Fencing epoch of the execution that wrote it (0: unprotected). */
  epoch: number;
  at: string;
}

/** Who is writing: the idempotency record and its fencing epoch. */
export interface Fence {
  recordKey: string;
  epoch: number;
  /** The store's transaction, when the record completes in the same commit (Postgres). */
  transaction?: unknown;
}

/**
 * The ledger's store did not answer (connection closed or refused, command
 * timed out): whether the write happened is unknown. It is the idempotency
 * package's 503 with `Retry-After`, so the caller retries with the same key
 * and the record is released rather than stored; the retry is safe, since a
 * charge written in the execution's transaction landed only if its record
 * completed with it, and a completed record is replayed.
 */
export function ledgerUnavailable(cause: unknown): StoreUnavailableError {
  return new StoreUnavailableError("The ledger's store did not answer; retry with the same Idempotency-Key", { cause });
}

/**
 * The payments ledger: the money taken, and the chain's ground truth. The
 * write carries its execution's `Fence`: payments' own ledger
 * (`PostgresLedger`) writes through the fence's transaction, which commits
 * with the record's completion, and the store refuses the completion of a
 * holder that lost its lease - its charge is rolled back with it. A ledger
 * outside that transaction must check the fence itself, in one atomic step
 * with the write, and throw an error of its own (an `HttpException`: its
 * status is the answer) when it refuses one.
 */
export interface Ledger {
  /**
   * @throws StoreUnavailableError (503, see {@link ledgerUnavailable}) when the ledger's store did not answer.
   */
  charge(entry: ChargeEntry, fence?: Fence): Promise<Charge>;
  /** @throws StoreUnavailableError (503) when the ledger's store did not answer. */
  chargesOf(orderId: string): Promise<Charge[]>;
}

/** What a write says about the money: the order, the account, the amount. */
export type ChargeEntry = Omit<Charge, 'chargeId' | 'epoch' | 'at'>;

/** A new line of the ledger for `entry`, stamped with the writer's epoch (0 without a fence). */
export function newCharge(entry: ChargeEntry, fence?: Fence): Charge {
  return { chargeId: `ch_${randomUUID()}`, ...entry, epoch: fence?.epoch ?? 0, at: new Date().toISOString() };
}
