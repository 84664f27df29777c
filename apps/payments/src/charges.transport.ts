import { Injectable, type INestApplication } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { Transport, type RmqOptions } from '@nestjs/microservices';
import type { HealthIndicatorResult } from '@nestjs/terminus';
import type { Observable } from 'rxjs';
import { chargeQueueOptions, declareChargeQueues } from './charge-queue.js';
import type { PaymentsConfig } from './config.js';

/**
 * The consumer's transport: manual acknowledgement (`noAck: false`), one
 * message at a time (`prefetchCount: 1`), so a message is acked only after
 * its charge is written and its idempotency record completed; see
 * `MessageAckInterceptor`.
 */
function chargeConsumerOptions(url: string, queue: string): RmqOptions {
  return {
    transport: Transport.RMQ,
    options: { urls: [url], queue, queueOptions: chargeQueueOptions(queue), noAck: false, prefetchCount: 1, persistent: true },
  };
}

/**
 * The consumer's connection to the broker, for `/health` under
 * `CHARGE_TRANSPORT=amqp` (`TRANSPORT_HEALTH_CHECKS`): `watch` follows the
 * RMQ server's status once `consumeChargesWhenQueued` attaches it.
 */
@Injectable()
export class ChargeConsumerHealth {
  /** Why no charge is consumed now, from the consumer's last status; `undefined` while connected. */
  private down: string | undefined = 'not connected to the broker yet';

  /** Follow the consumer's status (`INestMicroservice.status`, replaying the last one). */
  watch(status: Observable<string>): void {
    // RmqStatus is a const enum of @nestjs/microservices' types, not a value at runtime: compared as strings.
    // `blocked` is left out: the broker blocks connections that publish, and the consumer only consumes and acks.
    status.subscribe((status) => {
      if (status === 'connected') this.down = undefined;
      else if (status === 'disconnected') this.down = 'the broker connection is lost';
    });
  }

  /**
   * The broker's health under `key`, for `/health`: `down` while the
   * consumer is not connected, when charges wait in the queue; `up` once it
   * is (re)connected.
   */
  isHealthy(key = 'broker'): HealthIndicatorResult {
    return { [key]: this.down === undefined ? { status: 'up' } : { status: 'down', message: this.down } };
  }
}

/**
 * Under `CHARGE_TRANSPORT=amqp`, consume charge requests from `CHARGE_QUEUE`
 * in this application: declare the queues (failing fast, with the broker
 * named, when RabbitMQ does not answer), attach the RMQ server and start it;
 * under `http`, nothing. Call before `listen`, so `/health` answers only
 * once the consumer is attached. Pipes set on the app before this call
 * (`NestingDepthPipe`, validation) apply to the message payloads too: Nest
 * builds the handlers' pipes when the consumer is attached, and a pipe set
 * after it would check HTTP bodies only.
 *
 * The app is initialised first: a hybrid app's consumer starts taking
 * messages as soon as it starts, and Nest runs the modules' init hooks (the
 * store's connection) only in `init`/`listen`. Started before them, the
 * first message (a redelivery waiting in the queue) would find the store not
 * yet connected.
 */
export async function consumeChargesWhenQueued(app: INestApplication): Promise<void> {
  const config = app.get<ConfigService<PaymentsConfig, true>>(ConfigService);
  if (config.get('CHARGE_TRANSPORT', { infer: true }) !== 'amqp') return;
  const url = config.get('AMQP_URL', { infer: true });
  const queue = config.get('CHARGE_QUEUE', { infer: true });
  await app.init();
  await declareChargeQueues(url, queue);
  const consumer = app.connectMicroservice<RmqOptions>(chargeConsumerOptions(url, queue), { inheritAppConfig: true });
  app.get(ChargeConsumerHealth).watch(consumer.status);
  await app.startAllMicroservices();
}
