import { Inject, Injectable, type INestApplication } from '@nestjs/common';
import type { CustomStrategy, MicroserviceOptions, RmqOptions } from '@nestjs/microservices';
import type { HealthIndicatorResult } from '@nestjs/terminus';
import type { Observable } from 'rxjs';
import { ChargeConsumerServer } from './charge-consumer.server.js';
import { chargeQueueOptions, declareChargeQueues } from './charge-queue.js';
import { MessageTransport, type AttachesMessageTransport } from '../message-transports.js';
import { QUEUE_CONFIG } from './queue.constants.js';
import type { QueueConfig } from './queue.config.js';

/**
 * The consumer's transport: manual acknowledgement (`noAck: false`), one
 * message at a time (`prefetchCount: 1`), so a message is acked only after
 * its charge is written and its idempotency record completed; see
 * `MessageAckInterceptor`. Served by `ChargeConsumerServer`, whose channel
 * set-up a lost connection does not turn into an unhandled rejection.
 */
function chargeConsumerOptions(url: string, queue: string): CustomStrategy {
  const options: Required<RmqOptions>['options'] = {
    urls: [url],
    queue,
    queueOptions: chargeQueueOptions(queue),
    noAck: false,
    prefetchCount: 1,
    persistent: true,
    // Back within a second of the broker: amqp-connection-manager's default waits a whole
    // heartbeat interval (5 s) before each attempt, and no charge is consumed meanwhile.
    socketOptions: { reconnectTimeInSeconds: 1 },
  };
  return { strategy: new ChargeConsumerServer(options) };
}

/**
 * The consumer's connection to the broker, for `/health` under
 * `CHARGE_TRANSPORT=amqp` (`TRANSPORT_HEALTH_CHECKS`): `watch` follows the
 * RMQ server's status once `RabbitChargeConsumer` attaches it.
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
 * Attach the consumer `options` describe to `app` (initialised already),
 * with the app's pipes, filters and interceptors; follow its status for
 * `/health`, and start it.
 */
export async function startConsumer(app: INestApplication, options: MicroserviceOptions, health: ChargeConsumerHealth): Promise<void> {
  const consumer = app.connectMicroservice<MicroserviceOptions>(options, { inheritAppConfig: true });
  health.watch(consumer.status);
  await app.startAllMicroservices();
}

/**
 * Under `CHARGE_TRANSPORT=amqp`, consumes charge requests from
 * `CHARGE_QUEUE` in this application (see `attachMessageTransports`):
 * declares the queues (failing fast, with the broker named, when RabbitMQ
 * does not answer), attaches the RMQ server and starts it. Pipes set on the
 * app before it is attached (`NestingDepthPipe`, validation) apply to the
 * message payloads too: Nest builds the handlers' pipes when the consumer
 * is attached, and a pipe set after it would check HTTP bodies only.
 *
 * The app is initialised first: a hybrid app's consumer starts taking
 * messages as soon as it starts, and Nest runs the modules' init hooks (the
 * store's connection) only in `init`/`listen`. Started before them, the
 * first message (a redelivery waiting in the queue) would find the store not
 * yet connected.
 */
@Injectable()
@MessageTransport()
export class RabbitChargeConsumer implements AttachesMessageTransport {
  constructor(
    @Inject(QUEUE_CONFIG) private readonly config: QueueConfig,
    private readonly health: ChargeConsumerHealth,
  ) {}

  async attach(app: INestApplication): Promise<void> {
    const { AMQP_URL: url, CHARGE_QUEUE: queue } = this.config;
    await app.init();
    await declareChargeQueues(url, queue);
    await startConsumer(app, chargeConsumerOptions(url, queue), this.health);
  }
}
