import { connect, type ChannelModel } from 'amqplib';
import { randomUUID } from 'node:crypto';
import { AmqpProxy } from '../src/broker/amqp-proxy';
import { keyHash } from '../src/proxy/attempt';
import { AttemptLog } from '../src/proxy/attempt-log';
import { queueViolations } from '../src/run/queue-checks';
import { freePort } from './support/free-port';

const AMQP_URL = process.env.AMQP_URL || 'amqp://guest:guest@127.0.0.1:5672';

/** The parts of amqplib's consumer channel this test drives (the verifier's declarations leave them out). */
interface ConsumerChannel {
  assertQueue(queue: string, options: { durable: boolean }): Promise<unknown>;
  prefetch(count: number): Promise<unknown>;
  consume(queue: string, onMessage: (message: Message | null) => void): Promise<unknown>;
  ack(message: Message, allUpTo?: boolean): void;
  nack(message: Message, allUpTo: boolean, requeue: boolean): void;
  sendToQueue(queue: string, content: Buffer, options?: { headers?: Record<string, string> }): boolean;
}
interface Message {
  content: Buffer;
  fields: { deliveryTag: number; redelivered: boolean };
}

/**
 * The queue proxy on a real RabbitMQ, between it and an amqplib consumer: what it
 * reads of each delivery and of the consumer's settlements, as the reports show them.
 */
describe('the AMQP queue proxy', () => {
  let proxy: AmqpProxy;
  let log: AttemptLog;
  let publisher: ChannelModel;
  let consumer: ChannelModel;
  const queue = `verify.proxy.${randomUUID().slice(0, 8)}`;

  beforeAll(async () => {
    const port = await freePort();
    log = new AttemptLog();
    log.context = { scenario: 'settlements', intent: 'vfy-1' };
    proxy = new AmqpProxy({ name: 'consumer', host: '127.0.0.1', port, broker: AMQP_URL, queue, keyHeader: 'idempotency-key', log });
    publisher = await connect(AMQP_URL);
    const setup = (await publisher.createChannel()) as unknown as ConsumerChannel;
    await setup.assertQueue(queue, { durable: false });
    await proxy.start();
    const viaProxy = new URL(AMQP_URL);
    viaProxy.port = String(port);
    viaProxy.hostname = '127.0.0.1';
    consumer = await connect(viaProxy.toString());
  });
  afterAll(async () => {
    await consumer.close().catch(() => undefined);
    const channel = await publisher.createChannel();
    await channel.deleteQueue(queue);
    await publisher.close();
    await proxy.stop();
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
    const send = (await publisher.createChannel()) as unknown as ConsumerChannel;
    send.sendToQueue(queue, Buffer.from('a'), { headers: { 'idempotency-key': 'key-a' } });
    send.sendToQueue(queue, Buffer.from('b'));
    await done;
    expect(await log.whenQuiet(200, 10_000)).toBe(true);
    expect(await proxy.waiting()).toBe(0);
    const deliveries = log.of('settlements').map((a) => ({
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
      log.of('settlements'),
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
