import { connect, type ChannelModel } from 'amqplib';
import { randomUUID } from 'node:crypto';
import { keyHash } from '../src/proxy/attempt';
import { queueViolations } from '../src/run/queue-checks';
import type { ConsumerChannel, Message } from './support/amqp-consumer';
import { AMQP_URL, startQueueProxy, type QueueProxyRig } from './support/queue-proxy';

/**
 * The queue proxy on a real RabbitMQ, between it and an amqplib consumer: what it
 * reads of each delivery and of the consumer's settlements, as the reports show them.
 */
describe('the AMQP queue proxy', () => {
  const queue = `verify.proxy.${randomUUID().slice(0, 8)}`;
  let rig: QueueProxyRig;
  let consumer: ChannelModel;

  beforeAll(async () => {
    rig = await startQueueProxy(queue);
    rig.log.context = { scenario: 'settlements', intent: 'vfy-1' };
    consumer = await connect(rig.via);
  });
  afterAll(async () => {
    await consumer.close().catch(() => undefined);
    await rig.stop();
  });

  it("logs each delivery with its tag and key hash, and ends it with the consumer's ack, requeue or reject", async () => {
    const channel = (await consumer.createChannel()) as unknown as ConsumerChannel;
    await channel.prefetch(10);
    // The first delivery is nacked with requeue, its redelivery rejected for good, the third acked.
    const seen: Message[] = [];
    const done = new Promise<void>((resolve) => {
      void channel.consume(queue, (message) => {
        if (!message) return;
        seen.push(message);
        const text = message.content.toString();
        if (text === 'a' && !message.fields.redelivered) channel.nack(message, false, true);
        else if (text === 'a') channel.nack(message, false, false);
        else channel.ack(message);
        if (seen.length === 3) resolve();
      });
    });
    const send = (await rig.publisher.createChannel()) as unknown as ConsumerChannel;
    send.sendToQueue(queue, Buffer.from('a'), { headers: { 'idempotency-key': 'key-a' } });
    send.sendToQueue(queue, Buffer.from('b'));
    await done;
    expect(await rig.log.whenQuiet(200, 10_000)).toBe(true);
    expect(await rig.proxy.waiting()).toBe(0);
    const deliveries = rig.log.of('settlements').map((a) => ({
      keyHash: a.keyHash,
      redelivered: a.delivery?.redelivered,
      tag: a.delivery?.tag,
      outcome: a.outcome,
    }));
    // Which of the redelivery and b the broker hands over first is its choice: compared as a set.
    expect(deliveries[0]).toEqual({ keyHash: keyHash('key-a'), redelivered: false, tag: 1, outcome: 'requeued' });
    expect(deliveries.slice(1)).toEqual(
      expect.arrayContaining([
        { keyHash: keyHash('key-a'), redelivered: true, tag: expect.any(Number) as number, outcome: 'rejected' },
        { keyHash: null, redelivered: false, tag: expect.any(Number) as number, outcome: 'acked' },
      ]),
    );
    // The message refused for good is a broken invariant: its work was never done.
    const violations = queueViolations(
      { name: 'consumer', broker: AMQP_URL, listen: '', queue, keyHeader: 'idempotency-key' },
      rig.log.of('settlements'),
    );
    expect(violations).toEqual([
      {
        invariant: 'delivered',
        intentId: 'vfy-1',
        message: expect.stringMatching(/^consumer d\d \(tag \d\) was rejected without requeue/) as string,
      },
    ]);
  });
});
