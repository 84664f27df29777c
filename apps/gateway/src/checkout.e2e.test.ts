import type { MemoryStore } from '@idempotency-chain/idempotency';
import { IDEMPOTENCY_MODULE_OPTIONS, type IdempotencyModuleOptions } from '@idempotency-chain/idempotency/nest';
import { createServiceApp } from '@idempotency-chain/service-runtime';
import { bootService, closedPort, post, type BootedService } from '@idempotency-chain/service-runtime/testing';
import { randomUUID } from 'node:crypto';
import { GatewayModule } from './gateway.module';

const TOKEN_A = `token-a-${randomUUID()}`;

describe('the gateway authenticates its caller before any record', () => {
  let gateway: BootedService;
  let store: MemoryStore;
  beforeAll(async () => {
    gateway = await bootService('gateway', (config) => createServiceApp(GatewayModule.register(config)), {
      IDEMPOTENCY_STORE: 'memory',
      GATEWAY_API_KEYS: JSON.stringify({ [TOKEN_A]: 'tenant-a' }),
      // Orders is down: a request that got past the guards would answer 502, never 401 or 403.
      ORDERS_URL: `http://127.0.0.1:${await closedPort()}`,
    });
    store = gateway.app.get<IdempotencyModuleOptions>(IDEMPOTENCY_MODULE_OPTIONS).store as MemoryStore;
  });
  afterAll(() => gateway.app.close());

  const order = () => ({ orderId: `o-${randomUUID()}`, amountCents: 500 });

  it.each([
    ['no token', undefined],
    ['a wrong bearer token', `Bearer ${TOKEN_A}x`],
    ['a token of another scheme', `Basic ${TOKEN_A}`],
    ['an empty bearer token', 'Bearer '],
  ])('answers %s with 401 problem+json and writes no record', async (_case, authorization) => {
    const answer = await post({ url: gateway.url, authorization }, '/checkout', order(), randomUUID());
    expect(answer.status).toBe(401);
    expect(answer.headers.get('content-type')).toContain('application/problem+json');
    expect(answer.headers.get('www-authenticate')).toBe('Bearer');
    expect(answer.text).not.toContain(TOKEN_A);
    expect(store.size).toBe(0);
  });

  it('answers 403, before any record, when the body names an account other than the caller', async () => {
    const answer = await post({ url: gateway.url, authorization: `Bearer ${TOKEN_A}` }, '/checkout', { ...order(), account: 'tenant-b' });
    expect(answer.status).toBe(403);
    expect(answer.headers.get('content-type')).toContain('application/problem+json');
    expect(store.size).toBe(0);
  });

  it('lets a valid token through, as a bearer token or an X-Api-Key, to the idempotency claim', async () => {
    const bearer = await post({ url: gateway.url, authorization: `Bearer ${TOKEN_A}` }, '/checkout', order(), randomUUID());
    // Orders is down: 502, the record claimed and released (the key stays retryable).
    expect(bearer.status).toBe(502);
    const response = await fetch(`${gateway.url}/checkout`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': TOKEN_A, 'idempotency-key': randomUUID() },
      body: JSON.stringify({ ...order(), account: 'tenant-a' }),
    });
    expect(response.status).toBe(502);
  });
});
