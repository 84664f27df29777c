import type { Execution } from '@idempotency-chain/idempotency';
import { Inject, Injectable } from '@nestjs/common';
import type { Fence, Ledger } from './ledger.js';
import { LEDGER } from './ledger.provider.js';
import type { CapturedCharge, OrderPaymentDto } from './order-payment.dto.js';

/**
 * The one charge path of payments, whichever way the request came (`POST
 * /charges`, a message): the execution's record key, fencing epoch and
 * transaction go with the write, so the charge commits with the record's
 * completion or not at all: a holder that lost its lease has its completion
 * refused and its charge rolled back.
 */
@Injectable()
export class ChargeService {
  constructor(@Inject(LEDGER) private readonly ledger: Ledger) {}

  /** Write the charge of `order` under `execution` (none when the store is down and the operation fails open). */
  async charge(order: OrderPaymentDto, execution?: Execution): Promise<CapturedCharge> {
    const charge = await this.ledger.charge(order, fenceOf(execution));
    return { orderId: charge.orderId, chargeId: charge.chargeId, amountCents: charge.amountCents, status: 'captured' };
  }
}

/** Who is writing, as the ledger checks it; none for an unprotected execution (epoch 0). */
function fenceOf(execution: Execution | undefined): Fence | undefined {
  return execution?.epoch ? { recordKey: execution.recordKey, epoch: execution.epoch, transaction: execution.transaction } : undefined;
}
