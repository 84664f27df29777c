import type { IdempotentHttpClient } from '@idempotency-chain/http-client';
import { Idempotent } from '@idempotency-chain/idempotency/nest';
import { callNextHop, DOWNSTREAM, OrderPaymentDto, type PaidOrder } from '@idempotency-chain/lab-service';
import { Body, Controller, Inject, Post } from '@nestjs/common';

interface Charge {
  chargeId: string;
  amountCents: number;
}

/** Places an order and charges it; the key it got travels on to payments. */
@Controller('orders')
export class OrdersController {
  constructor(@Inject(DOWNSTREAM) private readonly payments: IdempotentHttpClient) {}

  @Post()
  @Idempotent('orders.place')
  async place(@Body() order: OrderPaymentDto): Promise<PaidOrder> {
    const charge = await callNextHop<Charge>(this.payments, '/charges', order);
    return { orderId: order.orderId, chargeId: charge.chargeId, amountCents: charge.amountCents, status: 'paid' };
  }
}
