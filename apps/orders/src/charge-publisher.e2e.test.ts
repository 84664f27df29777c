import { deriveHopKey } from '@idempotency-chain/http-client';
import { ValidationPipe } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { connect, type AmqpConnectionManager, type ChannelWrapper } from 'amqp-connection-manager';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { CHARGE_PATTERN } from './charge-queue.js';
import { QueuedOrdersModule } from './queued-orders.module.js';

/** The broker: `AMQP_URL`, else the local RabbitMQ. */
const AMQP_URL = process.env.AMQP_URL || 'amqp://guest:guest@127.0.0.1:5672';
const ORDERS_TOKEN = `orders-token-${randomUUID()}`;
const PAYMENTS_TOKEN = `payments-token-${randomUUID()}`;

describe('orders queuing charges on RabbitMQ (QueuedOrdersModule)', () => {
  const queue = `test.orders.charges.${randomUUID()}`;
  let broker: AmqpConnectionManager;
  let channel: ChannelWrapper;
  let app: NestFastifyApplication;
  let url: string;
  beforeAll(async () => {
    broker = connect([AMQP_URL]);
    channel = broker.createChannel({ json: false });
    await channel.waitForConnect();
    const root = await QueuedOrdersModule.forRoot({
      LOG_LEVEL: 'silent',
      IDEMPOTENCY_STORE: 'memory',
      ORDERS_TOKEN,
      PAYMENTS_TOKEN,
      AMQP_URL,
      CHARGE_QUEUE: queue,
    });
    app = await NestFactory.create<NestFastifyApplication>(root, new FastifyAdapter(), { logger: false });
    app.useGlobalPipes(new ValidationPipe({ whitelist: true, forbidNonWhitelisted: true, transform: true }));
    await app.listen(0, '127.0.0.1');
    url = `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`;
  });
  afterAll(async () => {
    await app.close();
    await channel.deleteQueue(queue);
    await channel.deleteQueue(`${queue}.dead`);
    await broker.close();
  });

  /** The next message waiting on the queue, taken off it; `undefined` when there is none. */
  const take = async () => (await channel.get(queue, { noAck: true })) || undefined;
  const place = (body: object, key: string) =>
    fetch(`${url}/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${ORDERS_TOKEN}`, 'idempotency-key': key },
      body: JSON.stringify(body),
    });

  it('checks the broker in /health, up while connected', async () => {
    const health = await fetch(`${url}/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ status: 'ok', info: { idempotencyStore: { status: 'up' }, broker: { status: 'up' } } });
  });

  it("answers 202 once the broker holds the charge, with the key of the order's record and payments' token in the message headers; a replay publishes nothing", async () => {
    const body = { orderId: `o-${randomUUID()}`, account: 'acct-3', amountCents: 700 };
    const key = randomUUID();
    const first = await place(body, key);
    expect(first.status).toBe(202);
    expect(await first.json()).toEqual({ orderId: body.orderId, status: 'charging' });

    const message = await take();
    expect(JSON.parse(message!.content.toString())).toEqual({ pattern: CHARGE_PATTERN, data: body });
    // The key the HTTP client would send: derived from the order's record here, so it carries the caller.
    const sent = deriveHopKey({ service: 'orders', operation: 'orders.place', scope: '', key });
    expect(message!.properties.headers?.['idempotency-key']).toBe(`"${sent}"`);
    // payments' service token, as the HTTP hop presents it.
    expect(message!.properties.headers?.authorization).toBe(`Bearer ${PAYMENTS_TOKEN}`);
    expect(message!.properties.deliveryMode).toBe(2);

    const again = await place(body, key);
    expect(again.status).toBe(202);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await take()).toBeUndefined();
  });
});

describe('orders queuing charges on RabbitMQ (QueuedOrdersModule), the broker unreachable', () => {
  let app: NestFastifyApplication;
  let url: string;
  beforeAll(async () => {
    // A port nothing listens on: every connection to the broker is refused.
    const closed = createServer().listen(0, '127.0.0.1');
    await once(closed, 'listening');
    const { port } = closed.address() as { port: number };
    await new Promise((resolve) => closed.close(resolve));
    const root = await QueuedOrdersModule.forRoot({
      LOG_LEVEL: 'silent',
      IDEMPOTENCY_STORE: 'memory',
      ORDERS_TOKEN,
      PAYMENTS_TOKEN,
      AMQP_URL: `amqp://guest:guest@127.0.0.1:${port}`,
      CHARGE_QUEUE: `test.orders.charges.${randomUUID()}`,
    });
    app = await NestFactory.create<NestFastifyApplication>(root, new FastifyAdapter(), { logger: false });
    await app.listen(0, '127.0.0.1');
    url = `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`;
  });
  afterAll(() => app.close());

  it('answers /health 503 naming the broker, as every order answers 503', async () => {
    const health = await fetch(`${url}/health`);
    expect(health.status).toBe(503);
    expect(await health.json()).toMatchObject({
      status: 503,
      detail: 'Health check failed: broker is down',
      checks: { idempotencyStore: { status: 'up' }, broker: { status: 'down' } },
    });
    const order = await fetch(`${url}/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${ORDERS_TOKEN}`, 'idempotency-key': randomUUID() },
      body: JSON.stringify({ orderId: `o-${randomUUID()}`, account: 'acct-3', amountCents: 700 }),
    });
    expect(order.status).toBe(503);
  });
});
