import type { Charge, ChargeEntry, Fence, Ledger } from '@idempotency-chain/payments';
import { LedgerOverlay } from '../ledger-overlay';
import { currentAttempt } from './attempt';
import type { LabFaults } from './lab-faults';

/**
 * The fault points around payments' side effect: the write to its ledger.
 * What is armed (`PUT /lab/faults`) happens just before the write (a stall,
 * a transient failure, a decline) or just after it, before the record is
 * completed (a crash, a slow answer). Nothing armed, it is the ledger itself.
 */
export class FaultyLedger extends LedgerOverlay {
  constructor(
    inner: Ledger,
    private readonly faults: LabFaults,
  ) {
    super(inner);
  }

  override async charge(entry: ChargeEntry, fence?: Fence): Promise<Charge> {
    const attempt = currentAttempt();
    await this.faults.beforeSideEffect(attempt);
    const charge = await this.inner.charge(entry, fence);
    await this.faults.afterSideEffect(attempt);
    return charge;
  }
}
