import { connect, type ChannelWrapper } from 'amqp-connection-manager';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { BrokerRelay } from './broker-relay.test-support.js';
import { CHARGE_PATTERN, chargeQueueOptions, deadLetterQueue } from './charge-queue.js';
import { bootPayments, chargeCount, PAYMENTS_TOKEN, type BootedPayments } from '../payments.test-support.js';

/** The broker: `AMQP_URL`, else the local RabbitMQ (`.ci/run` makes sure one answers). */
const AMQP_URL = process.env.AMQP_URL || 'amqp://guest:guest@127.0.0.1:5672';

/** payments on PostgreSQL, consuming `queue` as `main.ts` does under `CHARGE_TRANSPORT=amqp`. */
const bootConsumer = (queue: string, url = AMQP_URL) => bootPayments({ CHARGE_TRANSPORT: 'amqp', AMQP_URL: url, CHARGE_QUEUE: queue });

/** `AMQP_URL` with its port replaced: through a relay. */
const viaPort = (port: number) => Object.assign(new URL(AMQP_URL), { port: String(port) }).href;
const brokerAddress = () => {
  const broker = new URL(AMQP_URL);
  return { host: broker.hostname, port: Number(broker.port || 5672) };
};

/** Send `content` to `queue` as it is, with the key (if any) and the service token (unless `null`) in the headers, as orders does. */
function sendContent(channel: ChannelWrapper, queue: string, content: string, key?: string, token: string | null = PAYMENTS_TOKEN) {
  const headers = {
    ...(token === null ? {} : { authorization: `Bearer ${token}` }),
    ...(key === undefined ? {} : { 'idempotency-key': `"${key}"` }),
  };
  // amqplib ships no types here: its publish options are spelled out as amqplib takes them.
  return channel.sendToQueue(queue, Buffer.from(content), { persistent: true, headers } as Parameters<ChannelWrapper['sendToQueue']>[2]);
}

/** payments' `/health`: status and body. */
async function healthOf(payments: BootedPayments) {
  const response = await fetch(`${payments.url}/health`);
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

/** A probe for `eventually`: payments' `/health` once it answers `status`. */
const healthOfIs = (payments: BootedPayments, status: number) => async () => {
  const answer = await healthOf(payments);
  return answer.status === status ? answer : undefined;
};

/** Delete `queue` and its dead letters, on a connection of the test's own. */
async function deleteQueues(queue: string): Promise<void> {
  const cleanup = connect([AMQP_URL]);
  const channel = cleanup.createChannel({ json: false });
  await channel.waitForConnect();
  await channel.deleteQueue(queue);
  await channel.deleteQueue(deadLetterQueue(queue));
  await channel.close();
  await cleanup.close();
}

// A rejection no one handles ends a Node process (payments' own, in production): each test ends with none.
const unhandled: unknown[] = [];
const recordUnhandled = (reason: unknown) => unhandled.push(reason);
beforeAll(() => process.on('unhandledRejection', recordUnhandled));
afterAll(() => process.off('unhandledRejection', recordUnhandled));
afterEach(() => {
  expect(unhandled.splice(0).map(String)).toEqual([]);
});

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

  /** Publish as orders does: `{ pattern, data }`, the key (if any) and the service token (unless `null`) in the headers. */
  const publish = (data: object, key?: string, token: string | null = PAYMENTS_TOKEN) =>
    publishContent(JSON.stringify({ pattern: CHARGE_PATTERN, data }), key, token);
  /** Publish `content` as it is: a body `JSON.stringify` could not write. */
  const publishContent = (content: string, key?: string, token: string | null = PAYMENTS_TOKEN) =>
    sendContent(channel, queue, content, key, token);
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

  it.each([
    ['without the service token', null],
    ['with another token', `${PAYMENTS_TOKEN}-not`],
  ])('dead-letters a message %s, touching no record and charging nothing', async (_, token) => {
    const body = order();
    const key = randomUUID();
    await publish(body, key, token);
    const dead = await eventually(deadLettered);

    expect(JSON.parse(dead.content.toString()).data.orderId).toBe(body.orderId);
    expect(dead.properties.headers?.['x-death']?.[0]).toMatchObject({ reason: 'rejected', queue });
    expect(await charges(body.orderId)).toBe(0);
    // No record was claimed for the key: the same message with the token is charged, not answered with a stored refusal.
    await publish(body, key);
    await eventually(charged(body.orderId));
    expect(await charges(body.orderId)).toBe(1);
    expect(await deadLettered()).toBeUndefined();
  });

  it('dead-letters a body nested deeper than an HTTP body may be, charges nothing, and goes on to the next message', async () => {
    // Deep enough to overflow ValidationPipe's recursion (and JSON.stringify's), 40 kB: under any size limit.
    const body = order();
    const deep = '['.repeat(20_000) + ']'.repeat(20_000);
    const data = `${JSON.stringify(body).slice(0, -1)},"note":${deep}}`;
    await publishContent(`{"pattern":${JSON.stringify(CHARGE_PATTERN)},"data":${data}}`, randomUUID());
    // One message at a time: the next one is taken once the deep one is settled. A consumer's channel the
    // broker closed stays closed (amqp-connection-manager opens one only on a reconnect): charged, it was not.
    const next = order();
    await publish(next, randomUUID());
    const dead = await eventually(deadLettered);
    await eventually(charged(next.orderId));

    expect(JSON.parse(dead.content.toString()).data.orderId).toBe(body.orderId);
    expect(dead.properties.headers?.['x-death']?.[0]).toMatchObject({ reason: 'rejected', queue, count: 1 });
    expect(await charges(body.orderId)).toBe(0);
    expect(await charges(next.orderId)).toBe(1);
    expect(await deadLettered()).toBeUndefined();
  });
});

describe('payments consuming charge requests from RabbitMQ, /health', () => {
  const queue = `test.payments.charges.${randomUUID()}`;
  const relay = new BrokerRelay(brokerAddress());
  let payments: BootedPayments;

  const health = () => healthOf(payments);
  const healthIs = (status: number) => healthOfIs(payments, status);

  beforeAll(async () => {
    await relay.listen();
    payments = await bootConsumer(queue, viaPort(relay.port));
  });
  afterAll(async () => {
    await payments?.app.close();
    if (relay.listening) await relay.cut();
    await deleteQueues(queue);
  });

  it("checks the consumer's broker: up while connected, 503 naming it once the connection is lost, up again once it is back", async () => {
    expect(await health()).toMatchObject({
      status: 200,
      json: { status: 'ok', info: { idempotencyStore: { status: 'up' }, broker: { status: 'up' } } },
    });

    await relay.cut();
    expect(await eventually(healthIs(503))).toMatchObject({
      json: {
        status: 503,
        detail: 'Health check failed: broker is down',
        checks: { idempotencyStore: { status: 'up' }, broker: { status: 'down' } },
      },
    });

    await relay.listen(); // the same port: the consumer reconnects by itself
    expect(await eventually(healthIs(200), 30_000)).toMatchObject({ json: { info: { broker: { status: 'up' } } } });
  }, 60_000);
});

describe('payments consuming charge requests from RabbitMQ, the connection lost while it subscribes', () => {
  const queue = `test.payments.charges.${randomUUID()}`;
  const relay = new BrokerRelay(brokerAddress());
  const broker = connect([AMQP_URL]);
  let channel: ChannelWrapper;
  let payments: BootedPayments | undefined;

  beforeAll(async () => {
    channel = broker.createChannel({ json: false });
    await channel.waitForConnect();
    await relay.listen();
  });
  afterAll(async () => {
    await payments?.app.close();
    if (relay.listening) await relay.cut();
    await channel?.close();
    await broker.close();
    await deleteQueues(queue);
  });

  it('is no unhandled rejection: the consumer subscribes again once reconnected, and charges', async () => {
    // Cut when the consumer asks for its subscription, the broker's answer due: amqplib
    // rejects that answer, which Nest's RMQ server awaits nowhere (ChargeConsumerServer).
    const cut = relay.cutAtNextConsume();
    const booting = bootConsumer(queue, viaPort(relay.port));
    await cut;
    // Up only once subscribed, on the connection made after the cut.
    const booted = await booting;
    payments = booted;

    const body = order();
    await sendContent(channel, queue, JSON.stringify({ pattern: CHARGE_PATTERN, data: body }), randomUUID());
    await eventually(async () => ((await chargeCount(booted, body.orderId)) > 0 ? true : undefined));
    expect(await chargeCount(booted, body.orderId)).toBe(1);
  }, 30_000);
});

/** The part of an amqplib channel a set-up of the test's uses. */
interface RawChannel {
  consume(queue: string, onMessage: () => void, options: { exclusive: boolean }): Promise<unknown>;
}

describe('payments consuming charge requests from RabbitMQ, the subscription refused', () => {
  const queues: string[] = [];
  const broker = connect([AMQP_URL]);
  const holder = broker.createChannel({ json: false });
  const relay = new BrokerRelay(brokerAddress());
  let payments: BootedPayments | undefined;

  /** A new charge queue, declared as payments declares it. */
  const newQueue = async () => {
    const queue = `test.payments.charges.${randomUUID()}`;
    queues.push(queue);
    await holder.waitForConnect();
    await holder.assertQueue(deadLetterQueue(queue), { durable: true });
    await holder.assertQueue(queue, chargeQueueOptions(queue));
    return queue;
  };
  /** Another consumer takes `queue` exclusively: the broker refuses payments' subscription (403). */
  const holdExclusively = (queue: string) =>
    // On the channel itself: amqp-connection-manager's consume options do not spell `exclusive`.
    holder.addSetup(async (channel: RawChannel) => {
      await channel.consume(queue, () => undefined, { exclusive: true });
    });

  afterAll(async () => {
    await payments?.app.close();
    if (relay.listening) await relay.cut();
    await holder.close();
    await broker.close();
    for (const queue of queues) await deleteQueues(queue);
  });

  it("fails the boot with the broker's reason, and leaves no rejection unhandled", async () => {
    const queue = await newQueue();
    await holdExclusively(queue);

    await expect(bootConsumer(queue)).rejects.toThrow(/ACCESS.REFUSED.*in exclusive use/);
  });

  // The refusal ends the connection (amqplib, see ChargeConsumerServer): down, not up consuming nothing.
  it('answers /health with 503 when refused on a reconnect, and leaves no rejection unhandled', async () => {
    const queue = await newQueue();
    await relay.listen();
    payments = await bootConsumer(queue, viaPort(relay.port));
    await relay.cut();
    // The broker drops payments' subscription once it sees the connection closed: then the queue is free to hold.
    await eventually(async () => ((await holder.checkQueue(queue)).consumerCount === 0 ? true : undefined));
    await holdExclusively(queue);
    const subscribing = relay.nextConsume();
    await relay.listen(); // the consumer reconnects by itself, and is refused
    // Reconnected (up: Nest reports it connected before it subscribes), and asking to subscribe.
    await subscribing;

    expect(await eventually(healthOfIs(payments, 503), 30_000)).toMatchObject({
      json: { detail: 'Health check failed: broker is down', checks: { broker: { status: 'down' } } },
    });
  }, 60_000);
});
