import { bootService, type BootedService } from '@idempotency-chain/lab-service';
import { PaymentsModule } from '@idempotency-chain/payments/dist/payments.module';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import { OrdersModule } from './orders.module';

const env = { KEY_POLICY: 'propagated', IDEMPOTENCY_STORE: 'memory' };

async function place(orders: BootedService, body: unknown, key?: string) {
  const response = await fetch(`${orders.url}/orders`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key ? { 'idempotency-key': key } : {}) },
    body: JSON.stringify(body),
  });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

/** A loopback port nothing listens on: payments is down. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('orders over HTTP, in front of payments', () => {
  let payments: BootedService;
  let orders: BootedService;
  beforeAll(async () => {
    payments = await bootService('payments', (c) => PaymentsModule.register(c), env);
    orders = await bootService('orders', (c) => OrdersModule.register(c), { ...env, PAYMENTS_URL: payments.url });
  });
  afterAll(async () => {
    await orders.app.close();
    await payments.app.close();
  });

  const order = () => ({ orderId: `o-${randomUUID()}`, account: 'acct-3', amountCents: 700 });
  const charges = async (orderId: string) =>
    ((await (await fetch(`${payments.url}/charges?orderId=${orderId}`)).json()) as { count: number }).count;

  it('places and pays an order, then replays it with Idempotent-Replayed', async () => {
    const body = order();
    const key = randomUUID();
    const first = await place(orders, body, key);
    expect(first.status).toBe(201);
    expect(JSON.parse(first.text)).toMatchObject({ orderId: body.orderId, amountCents: 700, status: 'paid' });
    const again = await place(orders, body, key);
    expect(again.text).toBe(first.text);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await charges(body.orderId)).toBe(1);
  });

  it('answers 422 to a key reused with another amount', async () => {
    const body = order();
    const key = randomUUID();
    expect((await place(orders, body, key)).status).toBe(201);
    const reused = await place(orders, { ...body, amountCents: 1 }, key);
    expect(reused.status).toBe(422);
    expect(reused.headers.get('content-type')).toContain('application/problem+json');
    expect(await charges(body.orderId)).toBe(1);
  });

  it('refuses an order without a key, and a malformed key, before calling payments', async () => {
    const body = order();
    expect((await place(orders, body)).status).toBe(400);
    expect((await place(orders, body, 'é')).status).toBe(400);
    expect(await charges(body.orderId)).toBe(0);
  });

  it('has no fault hooks when the lab is not enabled', async () => {
    expect((await fetch(`${orders.url}/lab/faults`)).status).toBe(404);
  });
});

describe('orders when payments does not answer', () => {
  let orders: BootedService;
  beforeAll(async () => {
    orders = await bootService('orders', (c) => OrdersModule.register(c), {
      ...env,
      PAYMENTS_URL: `http://127.0.0.1:${await closedPort()}`,
    });
  });
  afterAll(() => orders.app.close());

  it('answers 502 after its retries and releases the key, so the retry runs again', async () => {
    const body = { orderId: `o-${randomUUID()}`, account: 'acct-3', amountCents: 700 };
    const key = randomUUID();
    const first = await place(orders, body, key);
    expect(first.status).toBe(502);
    expect(first.headers.get('content-type')).toContain('application/problem+json');
    const retry = await place(orders, body, key);
    expect(retry.status).toBe(502);
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
  });
});
