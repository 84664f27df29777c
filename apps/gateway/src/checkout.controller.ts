import { IdempotentHttpClient } from '@idempotency-chain/http-client';
import { relayAnswer } from '@idempotency-chain/http-client/nest';
import { Idempotent } from '@idempotency-chain/idempotency/nest';
import { Body, Controller, Post, Req, UseGuards } from '@nestjs/common';
import { AccountGuard } from './account.guard.js';
import { ApiKeyGuard, type Customer } from './api-key.guard.js';
import { CheckoutDto } from './checkout.dto.js';
import type { OrderPayment, PaidOrder } from './orders.client.js';

/**
 * The edge of the chain. Only an authenticated customer reaches it
 * (`ApiKeyGuard`), paying from its own account (`AccountGuard`); both run
 * before the idempotency interceptor, so a refused request touches no record.
 * The key of the user's intent is the caller's `Idempotency-Key`; without
 * one, the client derives it from the order id, within the caller's scope
 * (order ids are per account), so every retry below this point carries the
 * same key and two customers never share one.
 */
@Controller('checkout')
@UseGuards(ApiKeyGuard, AccountGuard)
export class CheckoutController {
  constructor(private readonly orders: IdempotentHttpClient) {}

  @Post()
  @Idempotent('gateway.checkout')
  checkout(@Body() checkout: CheckoutDto, @Req() request: { user: Customer }): Promise<PaidOrder> {
    const order: OrderPayment = { orderId: checkout.orderId, account: request.user.id, amountCents: checkout.amountCents };
    return relayAnswer(this.orders.post<PaidOrder>('/orders', order, { businessKey: order.orderId }));
  }
}
