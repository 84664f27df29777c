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

/** A write refused because a newer execution of the same record already wrote. */
export class StaleWriteError extends Error {
  override name = 'StaleWriteError';
}

/**
 * The payments ledger: the money taken, and the chain's ground truth. A
 * write carrying a fence is checked twice, in one atomic step with the write:
 * - refused when an execution with a newer epoch of the same record has been
 *   seen: a holder that lost its lease cannot charge after its successor;
 * - answered with the record's existing charge when there is one: an
 *   execution that charged and crashed before completing its record is not
 *   charged again by the retry that takes the record over.
 */
export interface Ledger {
  charge(entry: ChargeEntry, fence?: Fence): Promise<Charge>;
  chargesOf(orderId: string): Promise<Charge[]>;
}

/** What a write says about the money: the order, the account, the amount. */
export type ChargeEntry = Omit<Charge, 'chargeId' | 'epoch' | 'at'>;

/** A new line of the ledger for `entry`, stamped with the writer's epoch (0 without a fence). */
export function newCharge(entry: ChargeEntry, fence?: Fence): Charge {
  return { chargeId: `ch_${randomUUID()}`, ...entry, epoch: fence?.epoch ?? 0, at: new Date().toISOString() };
}

/** An entry kept for a record as long as `RedisLedger` keeps its key. */
interface Expiring<T> {
  value: T;
  expiresAt: number;
}

/**
 * A ledger in this process: lost with it. What it keeps per record (the
 * newest epoch, the record's charge) lives as long as the record's retention,
 * as `RedisLedger`'s keys do: a re-execution after the record expired is a
 * new charge on either ledger, and memory stays bounded by retention.
 */
export class MemoryLedger implements Ledger {
  private readonly charges = new Map<string, Charge[]>();
  private readonly fences = new Map<string, Expiring<number>>();
  private readonly byRecord = new Map<string, Expiring<Charge>>();

  constructor(
    private readonly retentionMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  async charge(entry: ChargeEntry, fence?: Fence): Promise<Charge> {
    const now = this.now();
    this.forgetExpired(now);
    if (fence) {
      if ((this.fences.get(fence.recordKey)?.value ?? 0) > fence.epoch) throw new StaleWriteError('stale fencing epoch');
      // Re-inserted, so both maps stay in expiry order (see forgetExpired).
      this.fences.delete(fence.recordKey);
      this.fences.set(fence.recordKey, { value: fence.epoch, expiresAt: now + this.retentionMs });
      const existing = this.byRecord.get(fence.recordKey);
      if (existing) return existing.value;
    }
    const charge = newCharge(entry, fence);
    if (fence) this.byRecord.set(fence.recordKey, { value: charge, expiresAt: now + this.retentionMs });
    this.charges.set(entry.orderId, [...(this.charges.get(entry.orderId) ?? []), charge]);
    return charge;
  }

  async chargesOf(orderId: string): Promise<Charge[]> {
    return this.charges.get(orderId) ?? [];
  }

  /** Entries are inserted with one TTL, in time order: the expired ones are at the front. */
  private forgetExpired(now: number): void {
    for (const map of [this.fences, this.byRecord] as Array<Map<string, Expiring<unknown>>>) {
      for (const [key, entry] of map) {
        if (entry.expiresAt > now) break;
        map.delete(key);
      }
    }
  }
}
