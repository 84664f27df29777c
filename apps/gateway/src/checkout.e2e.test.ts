import type { MemoryStore } from '@idempotency-chain/idempotency';
import { IDEMPOTENCY_MODULE_OPTIONS, type IdempotencyModuleOptions } from '@idempotency-chain/idempotency/nest';
import { ValidationPipe } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import { GatewayModule } from './gateway.module.js';

const KEY_A = `key-a-${randomUUID()}`;

/** A loopback port nothing listens on: orders is down. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('the gateway authenticates its caller before any record', () => {
  let app: NestFastifyApplication;
  let url: string;
  let store: MemoryStore;
  beforeAll(async () => {
    const root = await GatewayModule.forRoot({
      LOG_LEVEL: 'silent',
      IDEMPOTENCY_STORE: 'memory',
      GATEWAY_API_KEYS: JSON.stringify({ [KEY_A]: 'tenant-a' }),
      ORDERS_TOKEN: `orders-token-${randomUUID()}`,
      // Orders is down: a request that got past the guards would answer 502, never 401 or 403.
      ORDERS_URL: `http://127.0.0.1:${await closedPort()}`,
    });
    app = await NestFactory.create<NestFastifyApplication>(root, new FastifyAdapter(), { logger: false });
    app.useGlobalPipes(new ValidationPipe({ whitelist: true, forbidNonWhitelisted: true, transform: true }));
    await app.listen(0, '127.0.0.1');
    url = `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`;
    store = app.get<IdempotencyModuleOptions>(IDEMPOTENCY_MODULE_OPTIONS).store as MemoryStore;
  });
  afterAll(() => app.close());

  const checkout = (headers: Record<string, string>, body: object) =>
    fetch(`${url}/checkout`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': randomUUID(), ...headers },
      body: JSON.stringify({ orderId: `o-${randomUUID()}`, amountCents: 500, ...body }),
    });

  it.each([
    ['no key', {}],
    ['a wrong bearer key', { authorization: `Bearer ${KEY_A}x` }],
    ['a key of another scheme', { authorization: `Basic ${KEY_A}` }],
    ['an empty bearer key', { authorization: 'Bearer ' }],
  ])('answers %s with 401 problem+json and writes no record', async (_case, headers) => {
    const answer = await checkout(headers, {});
    expect(answer.status).toBe(401);
    expect(answer.headers.get('content-type')).toContain('application/problem+json');
    expect(answer.headers.get('www-authenticate')).toBe('Bearer');
    expect(await answer.text()).not.toContain(KEY_A);
    expect(store.size).toBe(0);
  });

  it('answers 403, before any record, when the body names an account other than the caller', async () => {
    const answer = await checkout({ authorization: `Bearer ${KEY_A}` }, { account: 'tenant-b' });
    expect(answer.status).toBe(403);
    expect(answer.headers.get('content-type')).toContain('application/problem+json');
    expect(store.size).toBe(0);
  });

  it('lets a valid key through, as a bearer token or an X-Api-Key, to the idempotency claim', async () => {
    // Orders is down: 502, the record claimed and released (the key stays retryable).
    expect((await checkout({ authorization: `Bearer ${KEY_A}` }, {})).status).toBe(502);
    expect((await checkout({ 'x-api-key': KEY_A }, { account: 'tenant-a' })).status).toBe(502);
  });

  it('answers /health with the store up', async () => {
    const health = await fetch(`${url}/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ status: 'ok', info: { idempotencyStore: { status: 'up' } } });
  });
});
