import { connect, type ChannelModel } from 'amqplib';
import { randomUUID } from 'node:crypto';
import type { ConsumerChannel, Message } from './support/amqp-consumer';
import { startQueueProxy, type QueueProxyRig } from './support/queue-proxy';

/**
 * A channel that closes while its consumer holds a delivery, on a real RabbitMQ: the
 * broker requeues the delivery, so the queue proxy ends it (requeued), and a channel
 * opened again with the same number and tags is read as new, so the chain settles.
 */
describe('the AMQP queue proxy on a closed channel', () => {
  const queue = `verify.channel-close.${randomUUID().slice(0, 8)}`;
  let rig: QueueProxyRig;
  let consumer: ChannelModel;

  beforeAll(async () => {
    rig = await startQueueProxy(queue);
    consumer = await connect(rig.via);
  });
  afterAll(async () => {
    await consumer.close().catch(() => undefined);
    await rig.stop();
  });

  /** Takes one message on a new channel, lets `drop` close that channel unsettled, and acks the redelivery on another. */
  async function closeThenAck(scenario: string, drop: (channel: ConsumerChannel, message: Message) => Promise<void>) {
    rig.log.context = { scenario, intent: 'vfy-1' };
    rig.proxy.setPlan(new Map());
    const first = (await consumer.createChannel()) as unknown as ConsumerChannel;
    const got = new Promise<Message>((resolve) => void first.consume(queue, (m) => m && resolve(m)));
    rig.setup.sendToQueue(queue, Buffer.from(scenario));
    await drop(first, await got);
    const second = (await consumer.createChannel()) as unknown as ConsumerChannel;
    const acked = new Promise<void>(
      (resolve) =>
        void second.consume(queue, (m) => {
          if (!m) return;
          second.ack(m);
          resolve();
        }),
    );
    await acked;
    await second.close();
    expect(await rig.log.whenQuiet(300, 10_000)).toBe(true);
    expect(await rig.proxy.waiting()).toBe(0);
    return rig.log.of(scenario).map((a) => [a.attempt, a.delivery?.channel, a.delivery?.tag, a.delivery?.redelivered, a.outcome]);
  }

  it('ends a delivery whose consumer closed its channel holding it, and reads the reopened channel as new', async () => {
    const deliveries = await closeThenAck('consumer-closed', (channel) => channel.close());
    expect(deliveries).toEqual([
      [1, 1, 1, false, 'requeued'],
      [2, 1, 1, true, 'acked'],
    ]);
  }, 30_000);

  it('ends a delivery whose channel the broker closed (an unknown tag acked)', async () => {
    const deliveries = await closeThenAck('broker-closed', async (channel, message) => {
      const closed = new Promise<void>((resolve) => channel.on('close', resolve));
      channel.on('error', () => undefined);
      channel.ack({ ...message, fields: { ...message.fields, deliveryTag: message.fields.deliveryTag + 100 } });
      await closed;
    });
    expect(deliveries).toEqual([
      [1, 1, 1, false, 'requeued'],
      [2, 1, 1, true, 'acked'],
    ]);
  }, 30_000);
});
