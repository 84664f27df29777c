import { connect, type ChannelWrapper } from 'amqp-connection-manager';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { CHARGE_PATTERN, deadLetterQueue } from './charge-queue';
import { bootPayments, chargeCount, type BootedPayments } from './payments.test-support';

/** The broker: `AMQP_URL`, else the local RabbitMQ (`.ci/run` makes sure one answers). */
const AMQP_URL = process.env.AMQP_URL || 'amqp://guest:guest@127.0.0.1:5672';

/** payments on PostgreSQL, consuming `queue` as `main.ts` does under `CHARGE_TRANSPORT=amqp`. */
const bootConsumer = (queue: string) => bootPayments({ CHARGE_TRANSPORT: 'amqp', AMQP_URL, CHARGE_QUEUE: queue });

const order = () => ({ orderId: `o-${randomUUID()}`, account: 'acct-7', amountCents: 500 });

/** Poll `probe` until it returns something, for at most `timeoutMs`. */
async function eventually<T>(probe: () => Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > until) throw new Error('timed out waiting');
    await sleep(50);
  }
}

describe('payments consuming charge requests from RabbitMQ (propagated)', () => {
  const queue = `test.payments.charges.${randomUUID()}`;
  const broker = connect([AMQP_URL]);
  let channel: ChannelWrapper;
  let payments: BootedPayments;

  beforeAll(async () => {
    channel = broker.createChannel({ json: false });
    await channel.waitForConnect();
    payments = await bootConsumer(queue);
  });
  afterAll(async () => {
    await payments?.app.close();
    await channel?.deleteQueue(queue);
    await channel?.deleteQueue(deadLetterQueue(queue));
    await channel?.close();
    await broker.close();
  });

  /** Publish as orders does: `{ pattern, data }`, the key (if any) in the headers. */
  const publish = (data: object, key?: string) => {
    // amqplib ships no types here: its publish options are spelled out as amqplib takes them.
    const options = { persistent: true, ...(key === undefined ? {} : { headers: { 'idempotency-key': `"${key}"` } }) };
    return channel.sendToQueue(
      queue,
      Buffer.from(JSON.stringify({ pattern: CHARGE_PATTERN, data })),
      options as Parameters<ChannelWrapper['sendToQueue']>[2],
    );
  };
  const charges = (orderId: string) => chargeCount(payments, orderId);
  const charged = (orderId: string) => async () => ((await charges(orderId)) > 0 ? true : undefined);
  const deadLettered = async () => {
    const message = await channel.get(deadLetterQueue(queue), { noAck: true });
    return message === false ? undefined : message;
  };

  it('charges a message delivered twice once, and acks both copies', async () => {
    const body = order();
    const key = randomUUID();
    await publish(body, key);
    await publish(body, key); // the same message again: what a redelivery looks like to the consumer
    // One message at a time (prefetch 1), settled after its work: once the next one is
    // charged, both copies were settled.
    const next = order();
    await publish(next, randomUUID());
    await eventually(charged(next.orderId));

    expect(await charges(body.orderId)).toBe(1);
    // Nothing is waiting or unacked: with the consumer gone, an unacked copy would be back in the queue.
    await payments.app.close();
    const { messageCount } = await channel.checkQueue(queue);
    expect(messageCount).toBe(0);
    expect(await deadLettered()).toBeUndefined();
    payments = await bootConsumer(queue);
  });

  it('dead-letters a message without a key, and charges nothing', async () => {
    const body = order();
    await publish(body);
    const dead = await eventually(deadLettered);

    expect(JSON.parse(dead.content.toString())).toEqual({ pattern: CHARGE_PATTERN, data: body });
    expect(dead.properties.headers?.['x-death']?.[0]).toMatchObject({ reason: 'rejected', queue });
    expect(await charges(body.orderId)).toBe(0);
  });

  it('dead-letters a key reused with another amount, and charges only the first', async () => {
    const body = order();
    const key = randomUUID();
    await publish(body, key);
    await eventually(charged(body.orderId));
    await publish({ ...body, amountCents: 900 }, key);
    const dead = await eventually(deadLettered);

    expect(JSON.parse(dead.content.toString()).data.amountCents).toBe(900);
    expect(await charges(body.orderId)).toBe(1);
  });

  it('dead-letters a body that fails validation, and charges nothing', async () => {
    const body = { ...order(), amountCents: -5 };
    await publish(body, randomUUID());
    await eventually(deadLettered);
    expect(await charges(body.orderId)).toBe(0);
  });
});
