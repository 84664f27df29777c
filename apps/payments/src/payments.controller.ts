import { CurrentExecution, Idempotent, type Execution } from '@idempotency-chain/idempotency/nest';
import { LabFaults, OrderPaymentDto, type PaidOrder } from '@idempotency-chain/lab-service';
import { Body, ConflictException, Controller, Get, Headers, Inject, Post, Query } from '@nestjs/common';
import { Counter } from 'prom-client';
import { LEDGER } from './ledger.provider';
import { StaleWriteError, type Charge, type Ledger } from './ledger';

const staleWrites = new Counter({
  name: 'ledger_stale_writes_refused_total',
  help: 'Charges refused because a newer execution of the same key had already written',
});

/** Takes the money. The one place in the chain where a duplicate costs the customer. */
@Controller('charges')
export class PaymentsController {
  constructor(
    @Inject(LEDGER) private readonly ledger: Ledger,
    private readonly faults: LabFaults,
  ) {}

  @Post()
  @Idempotent('payments.charge')
  async charge(
    @Body() order: OrderPaymentDto,
    @Headers('request-attempt') attempt?: string,
    @CurrentExecution() execution?: Execution,
  ): Promise<PaidOrder> {
    const fence = execution?.epoch
      ? { recordKey: execution.recordKey, epoch: execution.epoch, transaction: execution.transaction }
      : undefined;
    await this.faults.beforeSideEffect(Number(attempt ?? 1));
    let charge: Charge;
    try {
      charge = await this.ledger.charge(order, fence);
    } catch (error) {
      if (!(error instanceof StaleWriteError)) throw error;
      staleWrites.inc();
      throw new ConflictException('A newer attempt with this key has already charged');
    }
    await this.faults.afterSideEffect(Number(attempt ?? 1));
    return { orderId: charge.orderId, chargeId: charge.chargeId, amountCents: charge.amountCents, status: 'captured' };
  }

  /** The ledger's lines for one order: the lab counts charges here. */
  @Get()
  async charges(@Query('orderId') orderId = ''): Promise<{ count: number; charges: Charge[] }> {
    const charges = await this.ledger.chargesOf(orderId);
    return { count: charges.length, charges };
  }
}
