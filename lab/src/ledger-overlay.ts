import type { Charge, ChargeEntry, Fence, Ledger } from '@idempotency-chain/payments';
import type { OnApplicationShutdown, OnModuleInit } from '@nestjs/common';

/**
 * A ledger the lab puts in front of payments' own: what a subclass does not
 * change reaches the app's ledger as it was, its boot (the connection) and
 * shutdown included (Nest sees only the outermost instance).
 */
export abstract class LedgerOverlay implements Ledger, OnModuleInit, OnApplicationShutdown {
  constructor(protected readonly inner: Ledger) {}

  charge(entry: ChargeEntry, fence?: Fence): Promise<Charge> {
    return this.inner.charge(entry, fence);
  }

  chargesOf(orderId: string): Promise<Charge[]> {
    return this.inner.chargesOf(orderId);
  }

  async onModuleInit(): Promise<void> {
    await (this.inner as Partial<OnModuleInit>).onModuleInit?.();
  }

  async onApplicationShutdown(signal?: string): Promise<void> {
    await (this.inner as Partial<OnApplicationShutdown>).onApplicationShutdown?.(signal);
  }
}
