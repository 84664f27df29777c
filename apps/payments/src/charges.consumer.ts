import { CurrentExecution, Idempotent, type Execution } from '@idempotency-chain/idempotency/nest';
import { LabFaults, OrderPaymentDto, type PaidOrder } from '@idempotency-chain/lab-service';
import { Controller, Inject, UseInterceptors } from '@nestjs/common';
import { Ctx, EventPattern, Payload, type RmqContext } from '@nestjs/microservices';
import { CHARGE_PATTERN } from '@idempotency-chain/lab-service';
import type { Ledger } from './ledger';
import { LEDGER } from './ledger.provider';
import { deliveryAttempt, MessageAckInterceptor, type Delivery } from './message-ack.interceptor';

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
  constructor(
    @Inject(LEDGER) private readonly ledger: Ledger,
    private readonly faults: LabFaults,
  ) {}

  @EventPattern(CHARGE_PATTERN)
  @Idempotent('payments.charge')
  async charge(@Payload() order: OrderPaymentDto, @Ctx() context: RmqContext, @CurrentExecution() execution?: Execution): Promise<PaidOrder> {
    const fence = execution?.epoch ? { recordKey: execution.recordKey, epoch: execution.epoch } : undefined;
    const charge = await this.ledger.charge(order, fence);
    // The lab's "killed before ack": the charge is written, the record not yet completed, nothing acked.
    await this.faults.afterSideEffect(deliveryAttempt(context.getMessage() as Delivery));
    return { orderId: charge.orderId, chargeId: charge.chargeId, amountCents: charge.amountCents, status: 'captured' };
  }
}
