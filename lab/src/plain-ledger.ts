import type { Charge, ChargeEntry } from '@idempotency-chain/payments';
import { LedgerOverlay } from './ledger-overlay';

/**
 * The naive ledger of the lab's demonstrations (`LAB_NAIVE=plain-ledger`):
 * every write is a new charge, whatever record or epoch it came from.
 */
export class PlainLedger extends LedgerOverlay {
  override charge(entry: ChargeEntry): Promise<Charge> {
    return this.inner.charge(entry);
  }
}
