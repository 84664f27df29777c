import type { Execution } from '@idempotency-chain/idempotency';
import { CurrentExecution, Idempotent } from '@idempotency-chain/idempotency/nest';
import { Controller, UseInterceptors } from '@nestjs/common';
import { EventPattern, Payload } from '@nestjs/microservices';
import { CHARGE_PATTERN } from './charge-queue.js';
import { ChargeService } from '../charges.service.js';
import { MessageAckInterceptor } from './message-ack.interceptor.js';
import { MessageTokenInterceptor } from './message-token.interceptor.js';
import { OrderPaymentDto, type CapturedCharge } from '../order-payment.dto.js';

/**
 * Takes charge requests from RabbitMQ (`CHARGE_TRANSPORT=amqp`): the same
 * operation and charge path (`ChargeService`) as `POST /charges`, keyed on
 * the message's `idempotency-key` header. A message is acked only once its
 * charge is written and its record completed (`MessageAckInterceptor`,
 * outermost); a consumer killed before that leaves it to the broker to
 * redeliver, and the redelivery is answered by the record or by the
 * ledger's keying, never charged again. A message without the hop's
 * service token is dead-lettered before anything else reads it
 * (`MessageTokenInterceptor`, inside the ack).
 */
@Controller()
@UseInterceptors(MessageAckInterceptor, MessageTokenInterceptor)
export class ChargesConsumer {
  constructor(private readonly charges: ChargeService) {}

  // A plain pattern (`<string>`): NestJS 12's typed overload would type every argument after the payload `unknown`.
  @EventPattern<string>(CHARGE_PATTERN)
  @Idempotent('payments.charge')
  async charge(@Payload() order: OrderPaymentDto, @CurrentExecution() execution?: Execution): Promise<CapturedCharge> {
    return this.charges.charge(order, execution);
  }
}
