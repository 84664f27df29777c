import { chargeQueueOptions, deadLetterQueue, type ServiceConfig } from '@idempotency-chain/lab-service';
import type { INestApplication } from '@nestjs/common';
import { Transport, type RmqOptions } from '@nestjs/microservices';
import { connect, type ChannelWrapper } from 'amqp-connection-manager';

/**
 * The consumer's transport: manual acknowledgement (`noAck: false`), one
 * message at a time (`prefetchCount: 1`), so a message is acked only after
 * its charge is written and its idempotency record completed; see
 * `MessageAckInterceptor`.
 */
export function chargeConsumerOptions(config: ServiceConfig, queue: string): RmqOptions {
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

/** The broker's URL without its password, for messages. */
export function redactedUrl(url: string): string {
  const parsed = new URL(url);
  if (parsed.password) parsed.password = '***';
  return parsed.toString();
}

/**
 * Run `fn` on a short-lived channel: fails within `timeoutMs` when the broker
 * does not answer, instead of retrying forever as a consumer would.
 */
export async function withBrokerChannel<T>(
  url: string,
  fn: (channel: ChannelWrapper) => Promise<T>,
  timeoutMs = 3000,
): Promise<T> {
  const manager = connect([url], { reconnectTimeInSeconds: 0.2, connectionOptions: { timeout: timeoutMs } });
  manager.on('connectFailed', () => undefined);
  try {
    try {
      await manager.connect({ timeout: timeoutMs });
    } catch (error) {
      throw new Error(`RabbitMQ not reachable at ${redactedUrl(url)}: ${(error as Error).message}`, { cause: error });
    }
    const channel = manager.createChannel({ json: false });
    try {
      await channel.waitForConnect();
      return await fn(channel);
    } finally {
      await channel.close();
    }
  } finally {
    await manager.close();
  }
}

/** Declare the charge queue and its dead-letter queue (idempotent at the broker). */
export function declareChargeQueues(url: string, queue: string): Promise<void> {
  return withBrokerChannel(url, async (channel) => {
    await channel.assertQueue(deadLetterQueue(queue), { durable: true });
    await channel.assertQueue(queue, chargeQueueOptions(queue));
  });
}

/** Remove a lab run's queues (its `CHARGE_QUEUE`), with whatever they still hold. */
export function deleteChargeQueues(url: string, queue: string): Promise<void> {
  return withBrokerChannel(url, async (channel) => {
    await channel.deleteQueue(queue);
    await channel.deleteQueue(deadLetterQueue(queue));
  });
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
