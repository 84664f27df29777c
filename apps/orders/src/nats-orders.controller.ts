import { Idempotent } from '@idempotency-chain/idempotency/nest';
import { Body, Controller, Post, UseGuards } from '@nestjs/common';
import { NatsChargeRequester } from './nats-charge-requester.js';
import { OrderPaymentDto, type PaidOrder } from './order-payment.dto.js';
import { ServiceTokenGuard } from './service-token.guard.js';

/**
 * Places an order and charges it over NATS; the key it got travels on in
 * the request's headers. Only the gateway calls it, with the hop's service
 * token (`ServiceTokenGuard`).
 */
@Controller('orders')
@UseGuards(ServiceTokenGuard)
export class NatsOrdersController {
  constructor(private readonly payments: NatsChargeRequester) {}

  @Post()
  @Idempotent('orders.place')
  async place(@Body() order: OrderPaymentDto): Promise<PaidOrder> {
    const charge = await this.payments.charge(order);
    return { orderId: order.orderId, chargeId: charge.chargeId, amountCents: charge.amountCents, status: 'paid' };
  }
}
