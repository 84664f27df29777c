import type { IdempotentHttpClient } from '@idempotency-chain/http-client';
import { Idempotent } from '@idempotency-chain/idempotency/nest';
import { callNextHop, DOWNSTREAM, OrderPaymentDto, type PaidOrder } from '@idempotency-chain/lab-service';
import { Body, Controller, Inject, Post } from '@nestjs/common';

/**
 * The edge of the chain. The key of the user's intent is the caller's
 * `Idempotency-Key`; without one, the client derives it from the order id,
 * so every retry below this point carries the same key.
 */
@Controller('checkout')
export class CheckoutController {
  constructor(@Inject(DOWNSTREAM) private readonly orders: IdempotentHttpClient) {}

  @Post()
  @Idempotent('gateway.checkout')
  checkout(@Body() order: OrderPaymentDto): Promise<PaidOrder> {
    return callNextHop<PaidOrder>(this.orders, '/orders', order, { businessKey: order.orderId });
  }
}
