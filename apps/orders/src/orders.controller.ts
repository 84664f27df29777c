import type { IdempotentHttpClient } from '@idempotency-chain/http-client';
import { Idempotent } from '@idempotency-chain/idempotency/nest';
import { callNextHop, DOWNSTREAM, OrderPaymentDto, type PaidOrder } from '@idempotency-chain/lab-service';
import { Body, Controller, HttpCode, HttpStatus, Inject, Post } from '@nestjs/common';
import { ChargePublisher } from './charge-publisher';

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

/** An order whose charge is on its way to payments. */
export interface ChargingOrder {
  orderId: string;
  status: 'charging';
}

/**
 * `CHARGE_TRANSPORT=amqp`: places an order and queues its charge for
 * payments; 202, the charge is taken when payments consumes the message.
 * The key it got travels on in the message's headers.
 */
@Controller('orders')
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
