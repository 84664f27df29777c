import type { Execution } from '@idempotency-chain/idempotency';
import { CurrentExecution, Idempotent } from '@idempotency-chain/idempotency/nest';
import { Body, Controller, Get, Inject, Post, Query, UseGuards } from '@nestjs/common';
import { ChargeService } from './charges.service.js';
import type { Charge, Ledger } from './ledger.js';
import { LEDGER } from './ledger.provider.js';
import { OrderPaymentDto, type CapturedCharge } from './order-payment.dto.js';
import { ServiceTokenGuard } from './service-token.guard.js';

/**
 * Takes the money: the one place in the chain where a duplicate costs the
 * customer. `@Idempotent` runs the charge once per key and replays its
 * answer; `ChargeService` writes it in the execution's transaction, so it
 * commits with the record's completion or not at all. Only orders calls it, with the hop's
 * service token (`ServiceTokenGuard`): the ledger it reads back is every customer's.
 */
@Controller('charges')
@UseGuards(ServiceTokenGuard)
export class PaymentsController {
  constructor(
    private readonly chargeService: ChargeService,
    @Inject(LEDGER) private readonly ledger: Ledger,
  ) {}

  @Post()
  @Idempotent('payments.charge')
  async charge(@Body() order: OrderPaymentDto, @CurrentExecution() execution?: Execution): Promise<CapturedCharge> {
    return this.chargeService.charge(order, execution);
  }

  /** The ledger's lines for one order: the chain's ground truth. */
  @Get()
  async charges(@Query('orderId') orderId = ''): Promise<{ count: number; charges: Charge[] }> {
    const charges = await this.ledger.chargesOf(orderId);
    return { count: charges.length, charges };
  }
}
