import { connect, type ChannelModel } from 'amqplib';
import { AmqpProxy } from '../../src/broker/amqp-proxy';
import { AttemptLog } from '../../src/proxy/attempt-log';
import type { ConsumerChannel } from './amqp-consumer';
import { freePort } from './free-port';

/** The RabbitMQ the queue proxy's tests run on. */
export const AMQP_URL = process.env.AMQP_URL || 'amqp://guest:guest@127.0.0.1:5672';

/** A queue proxy in front of the real RabbitMQ, with the verifier's side of the broker. */
export interface QueueProxyRig {
  proxy: AmqpProxy;
  log: AttemptLog;
  /** A connection straight to the broker: publishes into the queue, checks what it holds. */
  publisher: ChannelModel;
  /** A channel on `publisher`. */
  setup: ConsumerChannel;
  /** The `amqp://` URL a consumer connects to the broker through the proxy with. */
  via: string;
  /** Deletes the queue and stops the proxy and the publisher. */
  stop(): Promise<void>;
}

/** Declares `queue` (not durable) and starts a queue proxy for it on a free port. */
export async function startQueueProxy(queue: string): Promise<QueueProxyRig> {
  const port = await freePort();
  const log = new AttemptLog();
  const proxy = new AmqpProxy({ name: 'consumer', host: '127.0.0.1', port, broker: AMQP_URL, queue, keyHeader: 'idempotency-key', log });
  const publisher = await connect(AMQP_URL);
  const setup = (await publisher.createChannel()) as unknown as ConsumerChannel;
  await setup.assertQueue(queue, { durable: false });
  await proxy.start();
  const via = new URL(AMQP_URL);
  via.hostname = '127.0.0.1';
  via.port = String(port);
  const stop = async () => {
    await setup.deleteQueue(queue).catch(() => undefined);
    await publisher.close().catch(() => undefined);
    await proxy.stop();
  };
  return { proxy, log, publisher, setup, via: via.toString(), stop };
}
