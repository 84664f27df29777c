import { OrderPaymentDto, type PaidOrder } from '@idempotency-chain/api';
import { CurrentExecution, Idempotent, type Execution } from '@idempotency-chain/idempotency/nest';
import { Body, ConflictException, Controller, Get, Inject, Post, Query } from '@nestjs/common';
import { Counter } from 'prom-client';
import { StaleWriteError, type Charge, type Ledger } from './ledger';
import { LEDGER } from './ledger.provider';

const staleWrites = new Counter({
  name: 'ledger_stale_writes_refused_total',
  help: 'Charges refused because a newer execution of the same key had already written',
});

/**
 * Takes the money: the one place in the chain where a duplicate costs the
 * customer. `@Idempotent` runs the charge once per key and replays its
 * answer; the execution's record key and fencing epoch go with the write,
 * so the ledger refuses a writer that lost its lease, and hands back the
 * charge a crashed execution already wrote.
 */
@Controller('charges')
export class PaymentsController {
  constructor(@Inject(LEDGER) private readonly ledger: Ledger) {}

  @Post()
  @Idempotent('payments.charge')
  async charge(@Body() order: OrderPaymentDto, @CurrentExecution() execution?: Execution): Promise<PaidOrder> {
    const fence = execution?.epoch
      ? { recordKey: execution.recordKey, epoch: execution.epoch, transaction: execution.transaction }
      : undefined;
    let charge: Charge;
    try {
      charge = await this.ledger.charge(order, fence);
    } catch (error) {
      if (!(error instanceof StaleWriteError)) throw error;
      staleWrites.inc();
      throw new ConflictException('A newer attempt with this key has already charged');
    }
    return { orderId: charge.orderId, chargeId: charge.chargeId, amountCents: charge.amountCents, status: 'captured' };
  }

  /** The ledger's lines for one order: the chain's ground truth. */
  @Get()
  async charges(@Query('orderId') orderId = ''): Promise<{ count: number; charges: Charge[] }> {
    const charges = await this.ledger.chargesOf(orderId);
    return { count: charges.length, charges };
  }
}
