import { newCharge, type Charge, type ChargeEntry, type Fence, type Ledger } from '@idempotency-chain/payments';
import { StaleWriteError } from './stale-write';

/** An entry kept for a record as long as `RedisLedger` keeps its key. */
interface Expiring<T> {
  value: T;
  expiresAt: number;
}

/**
 * The lab's ledger on the in-process store (`IDEMPOTENCY_STORE=memory`): in
 * this process, and lost with it, as the records are. What it keeps per record (the
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
      if ((this.fences.get(fence.recordKey)?.value ?? 0) > fence.epoch) throw new StaleWriteError();
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
