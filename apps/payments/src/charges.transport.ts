import { chargeQueueOptions, declareChargeQueues } from '@idempotency-chain/api';
import type { ServiceConfig } from '@idempotency-chain/service-runtime';
import type { INestApplication } from '@nestjs/common';
import { Transport, type RmqOptions } from '@nestjs/microservices';

/**
 * The consumer's transport: manual acknowledgement (`noAck: false`), one
 * message at a time (`prefetchCount: 1`), so a message is acked only after
 * its charge is written and its idempotency record completed; see
 * `MessageAckInterceptor`.
 */
function chargeConsumerOptions(config: ServiceConfig, queue: string): RmqOptions {
  return {
    transport: Transport.RMQ,
    options: {
      urls: [config.amqpUrl],
      queue,
      queueOptions: chargeQueueOptions(queue),
      noAck: false,
      prefetchCount: 1,
      persistent: true,
    },
  };
}

/**
 * Consume charge requests in this application: declare the queues (failing
 * fast, with the broker named, when RabbitMQ does not answer), attach the
 * RMQ server and start it. Call before `listen`, so `/health` answers only
 * once the consumer is attached. Pipes set on the app (validation) apply to
 * the message handlers too.
 *
 * The app is initialised first: a hybrid app's consumer starts taking
 * messages as soon as it starts, and Nest runs the modules' init hooks (the
 * store's connection) only in `init`/`listen`. Started before them, the
 * first message (a redelivery waiting in the queue) would find the store not
 * yet connected.
 */
export async function startChargeConsumer(app: INestApplication, config: ServiceConfig, queue = config.chargeQueue): Promise<void> {
  await app.init();
  await declareChargeQueues(config.amqpUrl, queue);
  app.connectMicroservice<RmqOptions>(chargeConsumerOptions(config, queue), { inheritAppConfig: true });
  await app.startAllMicroservices();
}

/** What payments does before it listens: under `CHARGE_TRANSPORT=amqp`, start consuming charge requests. */
export async function consumeChargesWhenQueued(app: INestApplication, config: ServiceConfig): Promise<void> {
  if (config.chargeTransport === 'amqp') await startChargeConsumer(app, config);
}
