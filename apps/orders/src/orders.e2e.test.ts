import { createServiceApp } from '@idempotency-chain/service-runtime';
import { bootService, closedPort, post, type BootedService } from '@idempotency-chain/service-runtime/testing';
import { randomUUID } from 'node:crypto';
import { OrdersModule } from './orders.module';

describe('orders when payments does not answer', () => {
  let orders: BootedService;
  beforeAll(async () => {
    orders = await bootService('orders', (config) => createServiceApp(OrdersModule.register(config)), {
      IDEMPOTENCY_STORE: 'memory',
      PAYMENTS_URL: `http://127.0.0.1:${await closedPort()}`,
    });
  });
  afterAll(() => orders.app.close());

  it('answers 502 after its retries and releases the key, so the retry runs again', async () => {
    const body = { orderId: `o-${randomUUID()}`, account: 'acct-3', amountCents: 700 };
    const key = randomUUID();
    const first = await post(orders, '/orders', body, key);
    expect(first.status).toBe(502);
    expect(first.headers.get('content-type')).toContain('application/problem+json');
    const retry = await post(orders, '/orders', body, key);
    expect(retry.status).toBe(502);
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
  });

  it('answers a caller without the service token 401', async () => {
    const body = { orderId: `o-${randomUUID()}`, account: 'acct-3', amountCents: 700 };
    const refused = await post({ url: orders.url }, '/orders', body, randomUUID());
    expect(refused.status).toBe(401);
    expect(refused.headers.get('content-type')).toContain('application/problem+json');
  });

  it('has no fault hooks: they exist only when the lab runs it', async () => {
    expect((await fetch(`${orders.url}/lab/faults`)).status).toBe(404);
  });
});
