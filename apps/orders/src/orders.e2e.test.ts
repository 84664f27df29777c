import { createServiceApp } from '@idempotency-chain/service-runtime';
import { bootService, post, type BootedService } from '@idempotency-chain/service-runtime/testing';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import { OrdersModule } from './orders.module';

/** A loopback port nothing listens on: payments is down. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

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

  it('has no fault hooks: they exist only when the lab runs it', async () => {
    expect((await fetch(`${orders.url}/lab/faults`)).status).toBe(404);
  });
});
