import { connect, type ChannelModel } from 'amqplib';
import { randomUUID } from 'node:crypto';
import { AmqpProxy } from '../src/broker/amqp-proxy';
import { AttemptLog } from '../src/proxy/attempt-log';
import type { ConsumerChannel } from './support/amqp-consumer';
import { freePort } from './support/free-port';

const AMQP_URL = process.env.AMQP_URL || 'amqp://guest:guest@127.0.0.1:5672';

/**
 * A lost ack on a real RabbitMQ loses the ack only: a consumer that publishes its
 * effect and then acks writes both in one TCP chunk (TCP_NODELAY, both in the same
 * tick), and the publish before the ack must still reach the broker, or the scenario
 * would test "publish and ack lost" and count one effect where a lost ack gives two.
 */
it('a lost ack loses the ack only: the effect the consumer published before it reaches the broker', async () => {
  const port = await freePort();
  const log = new AttemptLog();
  log.context = { scenario: 'lost-ack', intent: 'vfy-1' };
  const queue = `verify.lost-ack.in.${randomUUID().slice(0, 8)}`;
  const effects = `verify.lost-ack.fx.${randomUUID().slice(0, 8)}`;
  const proxy = new AmqpProxy({ name: 'consumer', host: '127.0.0.1', port, broker: AMQP_URL, queue, keyHeader: 'idempotency-key', log });
  const admin: ChannelModel = await connect(AMQP_URL);
  const setup = (await admin.createChannel()) as unknown as ConsumerChannel;
  await setup.assertQueue(queue, { durable: false });
  await setup.assertQueue(effects, { durable: false });
  await proxy.start();
  proxy.setPlan(new Map([[1, [{ kind: 'lose-ack' }]]]));
  const via = new URL(AMQP_URL);
  via.hostname = '127.0.0.1';
  via.port = String(port);
  const consumers: ChannelModel[] = [];
  let handled = 0;
  let redelivered!: () => void;
  const second = new Promise<void>((resolve) => (redelivered = resolve));
  // A naive consumer: publishes its effect, then acks; it reconnects when its connection is cut.
  const start = async (): Promise<void> => {
    const connection = await connect(via.toString(), { noDelay: true });
    consumers.push(connection);
    connection.on('error', () => undefined);
    connection.on('close', () => void (handled < 2 && start()));
    const channel = (await connection.createChannel()) as unknown as ConsumerChannel;
    await channel.consume(queue, (m) => {
      if (!m) return;
      handled += 1;
      channel.sendToQueue(effects, Buffer.from(`charged ${handled}`));
      channel.ack(m);
      if (handled === 2) redelivered();
    });
  };
  try {
    await start();
    setup.sendToQueue(queue, Buffer.from('charge order 42'));
    await second;
    expect(await log.whenQuiet(500, 10_000)).toBe(true);
    const { messageCount } = await setup.checkQueue(effects);
    expect(log.of('lost-ack').map((a) => [a.attempt, a.delivery?.redelivered, a.outcome])).toEqual([
      [1, false, 'ack-lost'],
      [2, true, 'acked'],
    ]);
    expect(messageCount).toBe(2);
  } finally {
    for (const c of consumers) await c.close().catch(() => undefined);
    await setup.deleteQueue(queue).catch(() => undefined);
    await setup.deleteQueue(effects).catch(() => undefined);
    await admin.close().catch(() => undefined);
    await proxy.stop();
  }
}, 30_000);
