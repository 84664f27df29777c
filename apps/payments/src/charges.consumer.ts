import { CHARGE_PATTERN, OrderPaymentDto, type PaidOrder } from '@idempotency-chain/api';
import { CurrentExecution, Idempotent, type Execution } from '@idempotency-chain/idempotency/nest';
import { Controller, Inject, UseInterceptors } from '@nestjs/common';
import { EventPattern, Payload } from '@nestjs/microservices';
import type { Ledger } from './ledger';
import { LEDGER } from './ledger.provider';
import { MessageAckInterceptor } from './message-ack.interceptor';

/**
 * Takes charge requests from RabbitMQ (`CHARGE_TRANSPORT=amqp`): the same
 * operation, ledger and fence as `POST /charges`, keyed on the message's
 * `idempotency-key` header. A message is acked only once its charge is
 * written and its record completed (`MessageAckInterceptor`, outermost); a
 * consumer killed before that leaves it to the broker to redeliver, and the
 * redelivery is answered by the record or by the ledger's keying, never
 * charged again.
 */
@Controller()
@UseInterceptors(MessageAckInterceptor)
export class ChargesConsumer {
  constructor(@Inject(LEDGER) private readonly ledger: Ledger) {}

  @EventPattern(CHARGE_PATTERN)
  @Idempotent('payments.charge')
  async charge(@Payload() order: OrderPaymentDto, @CurrentExecution() execution?: Execution): Promise<PaidOrder> {
    const fence = execution?.epoch ? { recordKey: execution.recordKey, epoch: execution.epoch } : undefined;
    const charge = await this.ledger.charge(order, fence);
    return { orderId: charge.orderId, chargeId: charge.chargeId, amountCents: charge.amountCents, status: 'captured' };
  }
}
