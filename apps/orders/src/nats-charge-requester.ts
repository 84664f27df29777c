import { messageKeyHeaders } from '@idempotency-chain/http-client';
import { statusOutcome } from '@idempotency-chain/idempotency';
import {
  BadGatewayException,
  Injectable,
  ServiceUnavailableException,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { ClientNats, NatsRecordBuilder } from '@nestjs/microservices';
import type { HealthIndicatorResult } from '@nestjs/terminus';
import { headers } from '@nats-io/transport-node';
import { PinoLogger } from 'nestjs-pino';
import { setTimeout as sleep } from 'node:timers/promises';
import { lastValueFrom, timeout } from 'rxjs';
import { CHARGE_PATTERN, CHARGE_TOKEN_HEADER } from './charge-queue.js';
import type { OrdersConfig } from './config.js';
import type { OrderPaymentDto } from './order-payment.dto.js';
import type { Charge } from './payments.client.js';

/** The pause before the second attempt, doubled after each one up to `MAX_PAUSE_MS`: payments may be restarting. */
const FIRST_PAUSE_MS = 250;
const MAX_PAUSE_MS = 2000;

/**
 * Asks payments for a charge over NATS, request/reply, and answers with it.
 * Core NATS keeps no message, so the retry is the redelivery: an attempt
 * unanswered within `DOWNSTREAM_TIMEOUT_MS` (payments killed before it
 * answered, a reply lost, no payments listening yet) is sent again, up to
 * `DOWNSTREAM_ATTEMPTS`, with the same `idempotency-key` header: the one
 * the HTTP client would send for the request being handled
 * (`messageKeyHeaders`), so payments answers a re-send from its record and
 * charges once. An answer payments gave (a refusal) is not retried unless
 * its status says the same request may succeed later. Each request carries
 * payments' service token in its `authorization` header. Extend it and
 * override `outboundKeyHeaders` to choose the key another way (and provide the
 * subclass as `NatsChargeRequester`).
 */
@Injectable()
export class NatsChargeRequester implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly client: ClientNats;
  private readonly authorization: string;
  private readonly timeoutMs: number;
  private readonly attempts: number;
  /** Why no charge can be requested now, from the client's last status; `undefined` while connected. */
  private down: string | undefined = 'not connected to the broker yet';

  constructor(
    config: ConfigService<OrdersConfig, true>,
    private readonly logger: PinoLogger,
  ) {
    this.client = new ClientNats({ servers: [config.get('NATS_URL', { infer: true })] });
    this.authorization = `Bearer ${config.get('PAYMENTS_TOKEN', { infer: true })}`;
    this.timeoutMs = config.get('DOWNSTREAM_TIMEOUT_MS', { infer: true });
    this.attempts = config.get('DOWNSTREAM_ATTEMPTS', { infer: true });
    // NatsStatus is a const enum of @nestjs/microservices' types, not a value at runtime: compared as strings.
    this.client.status.subscribe((natsStatus) => {
      const status: string = natsStatus;
      if (status === 'connected') this.down = undefined;
      else if (status === 'disconnected') this.down = 'the broker connection is lost';
    });
  }

  /** The broker's health under `key`, for `/health`: `down` while the client is not connected. */
  isHealthy(key = 'broker'): HealthIndicatorResult {
    return { [key]: this.down === undefined ? { status: 'up' } : { status: 'down', message: this.down } };
  }

  /** Connect before serving; a broker that does not answer yet is not fatal: each request retries it. */
  async onApplicationBootstrap(): Promise<void> {
    await this.client.connect().catch((error: unknown) => this.logger.warn({ err: error }, 'NATS not reachable at start'));
  }

  async onApplicationShutdown(): Promise<void> {
    await this.client.close();
  }

  /**
   * The charge of `order`, once payments answered it.
   *
   * @throws ServiceUnavailableException (503) when no attempt was answered: the order's key is released, and its retry asks again under the same key.
   * @throws BadGatewayException (502) when payments refused the charge for good.
   */
  async charge(order: OrderPaymentDto): Promise<Charge> {
    const sent = headers();
    sent.set(CHARGE_TOKEN_HEADER, this.authorization);
    for (const [name, value] of Object.entries(this.outboundKeyHeaders())) sent.set(name, value);
    const record = new NatsRecordBuilder({ orderId: order.orderId, account: order.account, amountCents: order.amountCents })
      .setHeaders(sent)
      .build();
    let last: unknown;
    for (let attempt = 1; attempt <= this.attempts; attempt++) {
      if (attempt > 1) await sleep(Math.min(FIRST_PAUSE_MS * 2 ** (attempt - 2), MAX_PAUSE_MS));
      try {
        return await lastValueFrom(this.client.send<Charge>(CHARGE_PATTERN, record).pipe(timeout(this.timeoutMs)));
      } catch (error) {
        last = error;
        const status = answeredStatus(error);
        if (status !== undefined && !statusOutcome(status).retryable) {
          throw new BadGatewayException('payments refused the charge', { cause: error });
        }
        // `chargeRequest: 'unanswered'`: what a timeline counts the re-sends by.
        this.logger.warn({ chargeRequest: 'unanswered', attempt, err: error }, 'charge request unanswered');
      }
    }
    throw new ServiceUnavailableException('payments did not answer the charge request', { cause: last });
  }

  /** The headers that carry the request's key: the one the HTTP client would send for the inbound request. */
  protected outboundKeyHeaders(): Record<string, string> {
    return messageKeyHeaders();
  }
}

/**
 * The status of an error payments answered with (an `RpcException`'s payload,
 * problem details); `undefined` for no answer at all (a timeout, no
 * responders, a lost connection) or one without a status: sent again.
 */
function answeredStatus(error: unknown): number | undefined {
  const status = (error as { status?: unknown } | null)?.status;
  return typeof status === 'number' ? status : undefined;
}
