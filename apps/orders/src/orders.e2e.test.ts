import { ValidationPipe } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import { OrdersModule } from './orders.module.js';

const ORDERS_TOKEN = `orders-token-${randomUUID()}`;

/** A loopback port nothing listens on: payments is down. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('orders when payments does not answer', () => {
  let app: NestFastifyApplication;
  let url: string;
  beforeAll(async () => {
    const root = await OrdersModule.forRoot({
      LOG_LEVEL: 'silent',
      IDEMPOTENCY_STORE: 'memory',
      ORDERS_TOKEN,
      PAYMENTS_TOKEN: `payments-token-${randomUUID()}`,
      PAYMENTS_URL: `http://127.0.0.1:${await closedPort()}`,
    });
    app = await NestFactory.create<NestFastifyApplication>(root, new FastifyAdapter(), { logger: false });
    app.useGlobalPipes(new ValidationPipe({ whitelist: true, forbidNonWhitelisted: true, transform: true }));
    await app.listen(0, '127.0.0.1');
    url = `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`;
  });
  afterAll(() => app.close());

  const place = (body: object, key: string, authorization?: string) =>
    fetch(`${url}/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': key, ...(authorization && { authorization }) },
      body: JSON.stringify(body),
    });
  const order = () => ({ orderId: `o-${randomUUID()}`, account: 'acct-3', amountCents: 700 });

  it('answers 502 after its retries and releases the key, so the retry runs again', async () => {
    const body = order();
    const key = randomUUID();
    const first = await place(body, key, `Bearer ${ORDERS_TOKEN}`);
    expect(first.status).toBe(502);
    expect(first.headers.get('content-type')).toContain('application/problem+json');
    const retry = await place(body, key, `Bearer ${ORDERS_TOKEN}`);
    expect(retry.status).toBe(502);
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
  });

  it.each([
    ['no token', undefined],
    ['another token', `Bearer ${ORDERS_TOKEN}x`],
  ])('answers a caller with %s 401', async (_case, authorization) => {
    const refused = await place(order(), randomUUID(), authorization);
    expect(refused.status).toBe(401);
    expect(refused.headers.get('content-type')).toContain('application/problem+json');
    expect(refused.headers.get('www-authenticate')).toBe('Bearer');
  });

  it('refuses a body that is not an order with 400', async () => {
    const refused = await place({ ...order(), amountCents: 'seven' }, randomUUID(), `Bearer ${ORDERS_TOKEN}`);
    expect(refused.status).toBe(400);
  });
});
