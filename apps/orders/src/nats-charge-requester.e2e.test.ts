import { deriveHopKey } from '@idempotency-chain/http-client';
import { ValidationPipe } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { connect, type Msg, type NatsConnection } from '@nats-io/transport-node';
import { randomUUID } from 'node:crypto';
import { CHARGE_PATTERN } from './charge-queue.js';
import { NatsOrdersModule } from './nats-orders.module.js';

/** The broker: `NATS_URL`, else the local NATS. */
const NATS_URL = process.env.NATS_URL || 'nats://127.0.0.1:4222';
const ORDERS_TOKEN = `orders-token-${randomUUID()}`;
const PAYMENTS_TOKEN = `payments-token-${randomUUID()}`;

/** A request as payments receives it: its headers and Nest's `{ pattern, data, id }`. */
interface Received {
  key: string;
  authorization: string;
  data: { orderId: string };
}

describe('orders asking payments for charges over NATS (NatsOrdersModule)', () => {
  let nats: NatsConnection;
  let app: NestFastifyApplication;
  let url: string;
  /** What payments does with the n-th request (0-based) of the test: answer it, or stay silent as a killed process does. */
  let answers: Array<'answer' | 'silent' | 'refuse'>;
  const received: Received[] = [];

  beforeAll(async () => {
    nats = await connect({ servers: NATS_URL });
    // payments, played by the test: each request is recorded, then answered (or not) as `answers` says.
    nats.subscribe(CHARGE_PATTERN, {
      callback: (_error, message: Msg) => {
        const request = message.json<{ id: string; data: { orderId: string } }>();
        received.push({
          key: message.headers?.get('idempotency-key') ?? '',
          authorization: message.headers?.get('authorization') ?? '',
          data: request.data,
        });
        const what = answers[received.length - 1] ?? 'answer';
        if (what === 'answer') {
          message.respond(
            JSON.stringify({ id: request.id, isDisposed: true, response: { chargeId: `ch-${received.length}`, amountCents: 500 } }),
          );
        } else if (what === 'refuse') {
          message.respond(JSON.stringify({ id: request.id, isDisposed: true, err: { status: 422, detail: 'declined' } }));
        }
      },
    });
    await nats.flush();
    const root = await NatsOrdersModule.forRoot({
      LOG_LEVEL: 'silent',
      IDEMPOTENCY_STORE: 'memory',
      ORDERS_TOKEN,
      PAYMENTS_TOKEN,
      NATS_URL,
      DOWNSTREAM_TIMEOUT_MS: '500',
      DOWNSTREAM_ATTEMPTS: '3',
    });
    app = await NestFactory.create<NestFastifyApplication>(root, new FastifyAdapter(), { logger: false });
    app.useGlobalPipes(new ValidationPipe({ whitelist: true, forbidNonWhitelisted: true, transform: true }));
    await app.listen(0, '127.0.0.1');
    url = `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`;
  });
  afterAll(async () => {
    await app?.close();
    await nats?.close();
  });
  beforeEach(() => {
    received.length = 0;
  });

  const place = (body: object, key: string) =>
    fetch(`${url}/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${ORDERS_TOKEN}`, 'idempotency-key': key },
      body: JSON.stringify(body),
    });
  const order = () => ({ orderId: `o-${randomUUID()}`, account: 'acct-7', amountCents: 500 });

  it('sends an unanswered request again with the same key, derived from its record, and answers with the charge', async () => {
    answers = ['silent', 'answer'];
    const key = `k-${randomUUID()}`;
    const response = await place(order(), `"${key}"`);
    expect(response.status).toBe(201);
    expect(await response.json()).toMatchObject({ chargeId: 'ch-2', status: 'paid' });
    const derived = `"${deriveHopKey({ service: 'orders', operation: 'orders.place', scope: '', key })}"`;
    expect(received.map((r) => r.key)).toEqual([derived, derived]);
    expect(received.map((r) => r.authorization)).toEqual([`Bearer ${PAYMENTS_TOKEN}`, `Bearer ${PAYMENTS_TOKEN}`]);
  });

  it('answers 502 and sends nothing again when payments refused the charge for good', async () => {
    answers = ['refuse'];
    const response = await place(order(), `"k-${randomUUID()}"`);
    expect(response.status).toBe(502);
    expect(received).toHaveLength(1);
  });

  it('answers 503 once every attempt went unanswered, so the caller may retry under its key', async () => {
    answers = ['silent', 'silent', 'silent'];
    const response = await place(order(), `"k-${randomUUID()}"`);
    expect(response.status).toBe(503);
    expect(received).toHaveLength(3);
  });
});
