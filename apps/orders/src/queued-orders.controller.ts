import { Idempotent } from '@idempotency-chain/idempotency/nest';
import { Body, Controller, HttpCode, HttpStatus, Post, UseGuards } from '@nestjs/common';
import { ChargePublisher } from './charge-publisher.js';
import { OrderPaymentDto } from './order-payment.dto.js';
import { ServiceTokenGuard } from './service-token.guard.js';

/** An order whose charge is on its way to payments. */
export interface ChargingOrder {
  orderId: string;
  status: 'charging';
}

/**
 * Places an order and queues its charge for payments; 202, the charge is
 * taken when payments consumes the message.
 * The key it got travels on in the message's headers. Only the gateway
 * calls it, with the hop's service token (`ServiceTokenGuard`).
 */
@Controller('orders')
@UseGuards(ServiceTokenGuard)
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
