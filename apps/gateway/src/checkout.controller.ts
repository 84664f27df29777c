import { OrderPaymentDto, type PaidOrder } from '@idempotency-chain/api';
import { IdempotentHttpClient } from '@idempotency-chain/http-client';
import { relayAnswer } from '@idempotency-chain/http-client/nest';
import { Idempotent } from '@idempotency-chain/idempotency/nest';
import { Body, Controller, Post } from '@nestjs/common';

/**
 * The edge of the chain. The key of the user's intent is the caller's
 * `Idempotency-Key`; without one, the client derives it from the order id,
 * within the account's scope (order ids are per account), so every retry
 * below this point carries the same key and two accounts never share one.
 */
@Controller('checkout')
export class CheckoutController {
  constructor(private readonly orders: IdempotentHttpClient) {}

  @Post()
  @Idempotent('gateway.checkout')
  checkout(@Body() order: OrderPaymentDto): Promise<PaidOrder> {
    return relayAnswer(this.orders.post<PaidOrder>('/orders', order, { businessKey: order.orderId }));
  }
}
