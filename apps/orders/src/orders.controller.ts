import { OrderPaymentDto, type PaidOrder } from '@idempotency-chain/api';
import { IdempotentHttpClient } from '@idempotency-chain/http-client';
import { relayAnswer } from '@idempotency-chain/http-client/nest';
import { Idempotent } from '@idempotency-chain/idempotency/nest';
import { CallerGuard } from '@idempotency-chain/service-runtime';
import { Body, Controller, Post, UseGuards } from '@nestjs/common';

interface Charge {
  chargeId: string;
  amountCents: number;
}

/**
 * Places an order and charges it; the key it got travels on to payments.
 * Only the gateway calls it, with the hop's service token (`CallerGuard`).
 */
@Controller('orders')
@UseGuards(CallerGuard)
export class OrdersController {
  constructor(private readonly payments: IdempotentHttpClient) {}

  @Post()
  @Idempotent('orders.place')
  async place(@Body() order: OrderPaymentDto): Promise<PaidOrder> {
    const charge = await relayAnswer(this.payments.post<Charge>('/charges', order));
    return { orderId: order.orderId, chargeId: charge.chargeId, amountCents: charge.amountCents, status: 'paid' };
  }
}
