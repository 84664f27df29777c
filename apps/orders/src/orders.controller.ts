import { OrderPaymentDto, type PaidOrder } from '@idempotency-chain/api';
import { IdempotentHttpClient } from '@idempotency-chain/http-client';
import { relayAnswer } from '@idempotency-chain/http-client/nest';
import { Idempotent } from '@idempotency-chain/idempotency/nest';
import { CallerGuard } from '@idempotency-chain/service-runtime';
import { Body, Controller, HttpCode, HttpStatus, Post, UseGuards } from '@nestjs/common';
import { ChargePublisher } from './charge-publisher';

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

/** An order whose charge is on its way to payments. */
export interface ChargingOrder {
  orderId: string;
  status: 'charging';
}

/**
 * `CHARGE_TRANSPORT=amqp`: places an order and queues its charge for
 * payments; 202, the charge is taken when payments consumes the message.
 * The key it got travels on in the message's headers. Only the gateway
 * calls it, with the hop's service token (`CallerGuard`).
 */
@Controller('orders')
@UseGuards(CallerGuard)
export class QueuedOrdersController {
  constructor(private readonly charges: ChargePublisher) {}

  @Post()
  @HttpCode(HttpStatus.ACCEPTED)
  @Idempotent('orders.place')
  async place(@Body() order: OrderPaymentDto): Promise<ChargingOrder> {
    await this.charges.publish(order);
    return { orderId: order.orderId, status: 'charging' };
  }
}
