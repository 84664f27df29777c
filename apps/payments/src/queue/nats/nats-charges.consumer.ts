import type { Execution } from '@idempotency-chain/idempotency';
import { CurrentExecution, Idempotent } from '@idempotency-chain/idempotency/nest';
import { Controller, UseInterceptors } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { ChargeService } from '../../charges.service.js';
import { OrderPaymentDto, type CapturedCharge } from '../../order-payment.dto.js';
import { CHARGE_PATTERN } from '../charge-queue.js';
import { MessageTokenInterceptor } from '../message-token.interceptor.js';

/**
 * Answers charge requests on NATS (`CHARGE_TRANSPORT=nats`): the same
 * operation and charge path (`ChargeService`) as `POST /charges`, keyed on
 * the message's `idempotency-key` header, and the charge as the reply.
 * Core NATS keeps no message: the reply is the acknowledgement, sent once
 * the charge is written and its record completed. A requester that hears
 * nothing (payments killed before it answered, a reply lost) sends the
 * same request again with the same key: the retry is the redelivery, and
 * it is answered by the record (replayed, or waiting for the execution in
 * flight), never charged again. A message without the hop's service token
 * is refused before anything reads it (`MessageTokenInterceptor`).
 */
@Controller()
@UseInterceptors(MessageTokenInterceptor)
export class NatsChargesConsumer {
  constructor(private readonly charges: ChargeService) {}

  // A plain pattern (`<string>`): NestJS 12's typed overload would type every argument after the payload `unknown`.
  @MessagePattern<string>(CHARGE_PATTERN)
  @Idempotent('payments.charge')
  async charge(@Payload() order: OrderPaymentDto, @CurrentExecution() execution?: Execution): Promise<CapturedCharge> {
    return this.charges.charge(order, execution);
  }
}
