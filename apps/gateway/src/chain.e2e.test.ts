import { bootService, type BootedService } from '@idempotency-chain/lab-service';
import { OrdersModule } from '@idempotency-chain/orders/dist/orders.module';
import { PaymentsModule } from '@idempotency-chain/payments/dist/payments.module';
import { randomUUID } from 'node:crypto';
import { GatewayModule } from './gateway.module';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

// The three services together on real Redis, called over real HTTP.
describe('gateway -> orders -> payments on Redis', () => {
  const env = { KEY_POLICY: 'propagated', IDEMPOTENCY_STORE: 'redis', REDIS_URL };
  const booted: BootedService[] = [];
  let gateway: BootedService;
  let payments: BootedService;

  beforeAll(async () => {
    payments = await bootService('payments', (c) => PaymentsModule.register(c), env);
    const orders = await bootService('orders', (c) => OrdersModule.register(c), { ...env, PAYMENTS_URL: payments.url });
    gateway = await bootService('gateway', (c) => GatewayModule.register(c), { ...env, ORDERS_URL: orders.url });
    booted.push(gateway, orders, payments);
  });
  afterAll(async () => {
    for (const service of booted) await service.app.close();
  });

  const checkout = async (body: object, key?: string) => {
    const response = await fetch(`${gateway.url}/checkout`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(key ? { 'idempotency-key': key } : {}) },
      body: JSON.stringify(body),
    });
    return { status: response.status, text: await response.text(), replayed: response.headers.get('idempotent-replayed') };
  };
  const charges = async (orderId: string) =>
    ((await (await fetch(`${payments.url}/charges?orderId=${orderId}`)).json()) as { count: number }).count;

  it('answers 20 concurrent checkouts with one key identically, with one charge', async () => {
    const order = { orderId: `o-${randomUUID()}`, account: 'acct-7', amountCents: 1250 };
    const key = randomUUID();
    const answers = await Promise.all(Array.from({ length: 20 }, () => checkout(order, key)));
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(201));
    expect(new Set(answers.map((a) => a.text)).size).toBe(1);
    expect(JSON.parse(answers[0]!.text)).toMatchObject({ orderId: order.orderId, amountCents: 1250, status: 'paid' });
    expect(await charges(order.orderId)).toBe(1);
  });

  it('derives the key from the order when the caller sends none', async () => {
    const order = { orderId: `o-${randomUUID()}`, account: 'acct-7', amountCents: 300 };
    const first = await checkout(order);
    const again = await checkout(order);
    expect([first.status, again.status]).toEqual([201, 201]);
    expect(again.text).toBe(first.text);
    expect(again.replayed).toBe('true');
    expect(await charges(order.orderId)).toBe(1);
  });

  it('answers 422 at the gateway when the key is reused with another amount', async () => {
    const order = { orderId: `o-${randomUUID()}`, account: 'acct-7', amountCents: 300 };
    const key = randomUUID();
    expect((await checkout(order, key)).status).toBe(201);
    expect((await checkout({ ...order, amountCents: 301 }, key)).status).toBe(422);
    expect(await charges(order.orderId)).toBe(1);
  });
});
