import { IdempotentHttpClient } from '@idempotency-chain/http-client';
import { relayAnswer } from '@idempotency-chain/http-client/nest';
import { Idempotent } from '@idempotency-chain/idempotency/nest';
import { Body, Controller, Post, UseGuards } from '@nestjs/common';
import { OrderPaymentDto, type PaidOrder } from './order-payment.dto.js';
import type { Charge } from './payments.client.js';
import { ServiceTokenGuard } from './service-token.guard.js';

/**
 * Places an order and charges it; the key it got travels on to payments.
 * Only the gateway calls it, with the hop's service token (`ServiceTokenGuard`).
 */
@Controller('orders')
@UseGuards(ServiceTokenGuard)
export class OrdersController {
  constructor(private readonly payments: IdempotentHttpClient) {}

  @Post()
  @Idempotent('orders.place')
  async place(@Body() order: OrderPaymentDto): Promise<PaidOrder> {
    const charge = await relayAnswer(this.payments.post<Charge>('/charges', order));
    return { orderId: order.orderId, chargeId: charge.chargeId, amountCents: charge.amountCents, status: 'paid' };
  }
}
