import { messageKey } from '@idempotency-chain/http-client';
import { formatIdempotencyKey, HeaderName } from '@idempotency-chain/idempotency';
import { Injectable, ServiceUnavailableException, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { ClientRMQ, RmqRecordBuilder } from '@nestjs/microservices';
import type { HealthIndicatorResult } from '@nestjs/terminus';
import { PinoLogger } from 'nestjs-pino';
import { lastValueFrom, timeout } from 'rxjs';
import { CHARGE_PATTERN, CHARGE_TOKEN_HEADER, chargeQueueOptions } from './charge-queue.js';
import type { OrdersConfig } from './config.js';
import type { OrderPaymentDto } from './order-payment.dto.js';

/** Longest wait for the broker to confirm a charge request; past it the order answers 503 and may be retried. */
const CONFIRM_TIMEOUT_MS = 5000;

/**
 * Sends charge requests to payments over RabbitMQ, fire-and-forget: the
 * order is answered once the broker has confirmed the message (publisher
 * confirms, persistent), not once it is charged. The key of the request
 * being handled travels in the message's `idempotency-key` header, as it
 * would in an HTTP header, so a message published twice (a retried order)
 * or delivered twice (a consumer killed before acking) is charged once.
 * Each message carries payments' service token, `PAYMENTS_TOKEN`, in its
 * `authorization` header (`Bearer <token>`), as the HTTP hop does: payments
 * dead-letters a message without it.
 * Extend it and override `outboundKey` to choose the key another way (and
 * provide the subclass as `ChargePublisher`).
 */
@Injectable()
export class ChargePublisher implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly client: ClientRMQ;
  /** The `authorization` header of every message: payments' service token. */
  private readonly authorization: string;
  /** Why a charge cannot be queued now, from the client's last status; `undefined` while connected. */
  private down: string | undefined = 'not connected to the broker yet';

  constructor(
    config: ConfigService<OrdersConfig, true>,
    private readonly logger: PinoLogger,
  ) {
    const queue = config.get('CHARGE_QUEUE', { infer: true });
    const url = config.get('AMQP_URL', { infer: true });
    this.authorization = `Bearer ${config.get('PAYMENTS_TOKEN', { infer: true })}`;
    this.client = new ClientRMQ({ urls: [url], queue, queueOptions: chargeQueueOptions(queue), persistent: true });
    // RmqStatus is a const enum of @nestjs/microservices' types, not a value at runtime: compared as strings.
    this.client.status.subscribe((rmqStatus) => {
      const status: string = rmqStatus;
      if (status === 'connected' || status === 'unblocked') this.down = undefined;
      else if (status === 'disconnected') this.down = 'the broker connection is lost';
      else if (status === 'blocked') this.down = 'the broker blocks publishing (a resource alarm)';
    });
  }

  /**
   * The broker's health under `key`, for `/health`: `down` while the client
   * is not connected (or the broker blocks publishing), when every order
   * would answer 503; `up` once it is (re)connected.
   */
  isHealthy(key = 'broker'): HealthIndicatorResult {
    return { [key]: this.down === undefined ? { status: 'up' } : { status: 'down', message: this.down } };
  }

  /** Connect before serving; a broker that does not answer yet is not fatal: publishing retries it. */
  async onApplicationBootstrap(): Promise<void> {
    await this.client.connect().catch((error: unknown) => this.logger.warn({ err: error }, 'RabbitMQ not reachable at start'));
  }

  async onApplicationShutdown(): Promise<void> {
    await this.client.close();
  }

  /** Queue the charge of `order`; resolves once the broker holds it. */
  async publish(order: OrderPaymentDto): Promise<void> {
    const key = this.outboundKey();
    const record = new RmqRecordBuilder({ orderId: order.orderId, account: order.account, amountCents: order.amountCents })
      .setOptions({
        persistent: true,
        headers: {
          [CHARGE_TOKEN_HEADER]: this.authorization,
          ...(key === undefined ? {} : { [HeaderName.IdempotencyKey]: formatIdempotencyKey(key) }),
        },
      })
      .build();
    try {
      await lastValueFrom(this.client.emit(CHARGE_PATTERN, record).pipe(timeout(CONFIRM_TIMEOUT_MS)), { defaultValue: undefined });
    } catch (error) {
      // Transient: the order's key is released, and its retry publishes again under the same key.
      throw new ServiceUnavailableException('The charge could not be queued', { cause: error });
    }
  }

  /**
   * The key the message carries: the one the HTTP client would send for the
   * inbound request (derived from its record here, so it carries the caller).
   */
  protected outboundKey(): string | undefined {
    return messageKey();
  }
}
