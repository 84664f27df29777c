import type { INestApplication } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { Transport, type RmqOptions } from '@nestjs/microservices';
import { chargeQueueOptions, declareChargeQueues } from './charge-queue';
import type { PaymentsConfig } from './config';

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
 * Under `CHARGE_TRANSPORT=amqp`, consume charge requests from `CHARGE_QUEUE`
 * in this application: declare the queues (failing fast, with the broker
 * named, when RabbitMQ does not answer), attach the RMQ server and start it;
 * under `http`, nothing. Call before `listen`, so `/health` answers only
 * once the consumer is attached. Pipes set on the app (validation) apply to
 * the message handlers too.
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
  app.connectMicroservice<RmqOptions>(chargeConsumerOptions(url, queue), { inheritAppConfig: true });
  await app.startAllMicroservices();
}
