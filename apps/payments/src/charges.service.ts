import type { Execution } from '@idempotency-chain/idempotency';
import { Inject, Injectable } from '@nestjs/common';
import { Counter } from 'prom-client';
import { StaleWriteError, type Fence, type Ledger } from './ledger.js';
import { LEDGER } from './ledger.provider.js';
import type { CapturedCharge, OrderPaymentDto } from './order-payment.dto.js';

const staleWrites = new Counter({
  name: 'ledger_stale_writes_refused_total',
  help: 'Charges refused because a newer execution of the same key had already written',
});

/**
 * The one charge path of payments, whichever way the request came (`POST
 * /charges`, a RabbitMQ message): the execution's record key, fencing epoch
 * and transaction go with the write, so the ledger refuses a writer that
 * lost its lease, hands back the charge a crashed execution already wrote,
 * and on PostgreSQL commits the charge with the record's completion.
 */
@Injectable()
export class ChargeService {
  constructor(@Inject(LEDGER) private readonly ledger: Ledger) {}

  /**
   * Write the charge of `order` under `execution` (none when the store is down and the operation fails open).
   * @throws StaleWriteError when a newer execution of the same key has already written.
   */
  async charge(order: OrderPaymentDto, execution?: Execution): Promise<CapturedCharge> {
    try {
      const charge = await this.ledger.charge(order, fenceOf(execution));
      return { orderId: charge.orderId, chargeId: charge.chargeId, amountCents: charge.amountCents, status: 'captured' };
    } catch (error) {
      if (error instanceof StaleWriteError) staleWrites.inc();
      throw error;
    }
  }
}

/** Who is writing, as the ledger checks it; none for an unprotected execution (epoch 0). */
function fenceOf(execution: Execution | undefined): Fence | undefined {
  return execution?.epoch ? { recordKey: execution.recordKey, epoch: execution.epoch, transaction: execution.transaction } : undefined;
}
