import { randomUUID } from 'node:crypto';
import { bootLabService, chargeCount, type LabService, post } from './testing';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

// The three services together on real Redis, called over real HTTP.
describe('gateway -> orders -> payments on Redis', () => {
  const env = { KEY_POLICY: 'propagated', IDEMPOTENCY_STORE: 'redis', REDIS_URL };
  const booted: LabService[] = [];
  let gateway: LabService;
  let payments: LabService;

  beforeAll(async () => {
    payments = await bootLabService('payments', env);
    const orders = await bootLabService('orders', { ...env, PAYMENTS_URL: payments.url });
    gateway = await bootLabService('gateway', { ...env, ORDERS_URL: orders.url });
    booted.push(gateway, orders, payments);
  });
  afterAll(async () => {
    for (const service of booted) await service.app.close();
  });

  const checkout = async (body: object, key?: string) => {
    const answer = await post(gateway, '/checkout', body, key);
    return { status: answer.status, text: answer.text, replayed: answer.headers.get('idempotent-replayed') };
  };

  it('answers 20 concurrent checkouts with one key identically, with one charge', async () => {
    const order = { orderId: `o-${randomUUID()}`, account: 'acct-7', amountCents: 1250 };
    const key = randomUUID();
    const answers = await Promise.all(Array.from({ length: 20 }, () => checkout(order, key)));
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(201));
    expect(new Set(answers.map((a) => a.text)).size).toBe(1);
    expect(JSON.parse(answers[0]!.text)).toMatchObject({ orderId: order.orderId, amountCents: 1250, status: 'paid' });
    expect(await chargeCount(payments, order.orderId)).toBe(1);
  });

  it('derives the key from the order when the caller sends none', async () => {
    const order = { orderId: `o-${randomUUID()}`, account: 'acct-7', amountCents: 300 };
    const first = await checkout(order);
    const again = await checkout(order);
    expect([first.status, again.status]).toEqual([201, 201]);
    expect(again.text).toBe(first.text);
    expect(again.replayed).toBe('true');
    expect(await chargeCount(payments, order.orderId)).toBe(1);
  });

  it('answers 422 at the gateway when the key is reused with another amount', async () => {
    const order = { orderId: `o-${randomUUID()}`, account: 'acct-7', amountCents: 300 };
    const key = randomUUID();
    expect((await checkout(order, key)).status).toBe(201);
    expect((await checkout({ ...order, amountCents: 301 }, key)).status).toBe(422);
    expect(await chargeCount(payments, order.orderId)).toBe(1);
  });
});
