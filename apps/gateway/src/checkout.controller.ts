import type { OrderPaymentDto, PaidOrder } from '@idempotency-chain/api';
import { IdempotentHttpClient } from '@idempotency-chain/http-client';
import { relayAnswer } from '@idempotency-chain/http-client/nest';
import { Idempotent } from '@idempotency-chain/idempotency/nest';
import { type Caller, CallerGuard } from '@idempotency-chain/service-runtime';
import { Body, Controller, Post, Req, UseGuards } from '@nestjs/common';
import { AccountGuard } from './account.guard';
import { CheckoutDto } from './checkout.dto';

/**
 * The edge of the chain. Only an authenticated customer reaches it
 * (`CallerGuard`), paying from its own account (`AccountGuard`); both run
 * before the idempotency interceptor, so a refused request touches no record.
 * The key of the user's intent is the caller's `Idempotency-Key`; without
 * one, the client derives it from the order id, within the caller's scope
 * (order ids are per account), so every retry below this point carries the
 * same key and two customers never share one.
 */
@Controller('checkout')
@UseGuards(CallerGuard, AccountGuard)
export class CheckoutController {
  constructor(private readonly orders: IdempotentHttpClient) {}

  @Post()
  @Idempotent('gateway.checkout')
  checkout(@Body() checkout: CheckoutDto, @Req() request: { user: Caller }): Promise<PaidOrder> {
    const order: OrderPaymentDto = { orderId: checkout.orderId, account: request.user.id, amountCents: checkout.amountCents };
    return relayAnswer(this.orders.post<PaidOrder>('/orders', order, { businessKey: order.orderId }));
  }
}
