import { connect, type ChannelWrapper } from 'amqp-connection-manager';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { connect as connectTcp, createServer, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { CHARGE_PATTERN, deadLetterQueue } from './charge-queue.js';
import { bootPayments, chargeCount, PAYMENTS_TOKEN, type BootedPayments } from '../payments.test-support.js';

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

  /** Publish as orders does: `{ pattern, data }`, the key (if any) and the service token (unless `null`) in the headers. */
  const publish = (data: object, key?: string, token: string | null = PAYMENTS_TOKEN) =>
    publishContent(JSON.stringify({ pattern: CHARGE_PATTERN, data }), key, token);
  /** Publish `content` as it is: a body `JSON.stringify` could not write. */
  const publishContent = (content: string, key?: string, token: string | null = PAYMENTS_TOKEN) => {
    const headers = {
      ...(token === null ? {} : { authorization: `Bearer ${token}` }),
      ...(key === undefined ? {} : { 'idempotency-key': `"${key}"` }),
    };
    // amqplib ships no types here: its publish options are spelled out as amqplib takes them.
    return channel.sendToQueue(queue, Buffer.from(content), { persistent: true, headers } as Parameters<ChannelWrapper['sendToQueue']>[2]);
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
});

describe('payments consuming charge requests from RabbitMQ, /health', () => {
  const queue = `test.payments.charges.${randomUUID()}`;
  const broker = new URL(AMQP_URL);
  const upstream = { host: broker.hostname, port: Number(broker.port || 5672) };
  /** A TCP relay to the broker that the test can cut and restore: the broker going away and coming back. */
  const relay = { server: createServer(), sockets: new Set<Socket>(), port: 0 };
  let payments: BootedPayments;

  const listen = async () => {
    relay.server = createServer((client) => {
      const server = connectTcp(upstream.port, upstream.host);
      for (const socket of [client, server]) {
        relay.sockets.add(socket);
        socket.on('close', () => relay.sockets.delete(socket));
        socket.on('error', () => undefined);
      }
      client.pipe(server).pipe(client);
    });
    relay.server.listen(relay.port, '127.0.0.1');
    await once(relay.server, 'listening');
    relay.port = (relay.server.address() as { port: number }).port;
  };
  const cut = async () => {
    const closed = new Promise((resolve) => relay.server.close(resolve));
    for (const socket of relay.sockets) socket.destroy();
    await closed;
  };
  const health = async () => {
    const response = await fetch(`${payments.url}/health`);
    return { status: response.status, json: (await response.json()) as Record<string, unknown> };
  };
  const healthIs = (status: number) => async () => {
    const answer = await health();
    return answer.status === status ? answer : undefined;
  };

  beforeAll(async () => {
    await listen();
    broker.port = String(relay.port);
    payments = await bootPayments({ CHARGE_TRANSPORT: 'amqp', AMQP_URL: broker.href, CHARGE_QUEUE: queue });
  });
  afterAll(async () => {
    await payments?.app.close();
    if (relay.server.listening) await cut();
    const cleanup = connect([AMQP_URL]);
    const channel = cleanup.createChannel({ json: false });
    await channel.waitForConnect();
    await channel.deleteQueue(queue);
    await channel.deleteQueue(deadLetterQueue(queue));
    await channel.close();
    await cleanup.close();
  });

  it("checks the consumer's broker: up while connected, 503 naming it once the connection is lost, up again once it is back", async () => {
    expect(await health()).toMatchObject({
      status: 200,
      json: { status: 'ok', info: { idempotencyStore: { status: 'up' }, broker: { status: 'up' } } },
    });

    await cut();
    expect(await eventually(healthIs(503))).toMatchObject({
      json: {
        status: 503,
        detail: 'Health check failed: broker is down',
        checks: { idempotencyStore: { status: 'up' }, broker: { status: 'down' } },
      },
    });

    await listen(); // the same port: the consumer reconnects by itself
    expect(await eventually(healthIs(200), 30_000)).toMatchObject({ json: { info: { broker: { status: 'up' } } } });
  }, 60_000);
});
