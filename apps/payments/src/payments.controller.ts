import type { Execution } from '@idempotency-chain/idempotency';
import { CurrentExecution, Idempotent } from '@idempotency-chain/idempotency/nest';
import { Body, ConflictException, Controller, Get, Inject, Post, Query, UseGuards } from '@nestjs/common';
import { ChargeService } from './charges.service.js';
import { StaleWriteError, type Charge, type Ledger } from './ledger.js';
import { LEDGER } from './ledger.provider.js';
import { OrderPaymentDto, type CapturedCharge } from './order-payment.dto.js';
import { ServiceTokenGuard } from './service-token.guard.js';

/**
 * Takes the money: the one place in the chain where a duplicate costs the
 * customer. `@Idempotent` runs the charge once per key and replays its
 * answer; `ChargeService` writes it fenced by the execution, so the ledger
 * refuses a writer that lost its lease (409), and hands back the charge a
 * crashed execution already wrote. Only orders calls it, with the hop's
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
    try {
      return await this.chargeService.charge(order, execution);
    } catch (error) {
      if (error instanceof StaleWriteError) throw new ConflictException('A newer attempt with this key has already charged');
      throw error;
    }
  }

  /** The ledger's lines for one order: the chain's ground truth. */
  @Get()
  async charges(@Query('orderId') orderId = ''): Promise<{ count: number; charges: Charge[] }> {
    const charges = await this.ledger.chargesOf(orderId);
    return { count: charges.length, charges };
  }
}
