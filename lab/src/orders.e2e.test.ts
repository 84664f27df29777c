import { randomUUID } from 'node:crypto';
import { bootLabService, chargeCount, type LabService, post } from './testing';

const env = { KEY_POLICY: 'propagated', IDEMPOTENCY_STORE: 'memory' };

describe('orders over HTTP, in front of payments', () => {
  let payments: LabService;
  let orders: LabService;
  beforeAll(async () => {
    payments = await bootLabService('payments', env);
    orders = await bootLabService('orders', { ...env, PAYMENTS_URL: payments.url });
  });
  afterAll(async () => {
    await orders.app.close();
    await payments.app.close();
  });

  const order = () => ({ orderId: `o-${randomUUID()}`, account: 'acct-3', amountCents: 700 });
  const place = (body: unknown, key?: string) => post(orders, '/orders', body, key);

  it('places and pays an order, then replays it with Idempotent-Replayed', async () => {
    const body = order();
    const key = randomUUID();
    const first = await place(body, key);
    expect(first.status).toBe(201);
    expect(JSON.parse(first.text)).toMatchObject({ orderId: body.orderId, amountCents: 700, status: 'paid' });
    const again = await place(body, key);
    expect(again.text).toBe(first.text);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await chargeCount(payments, body.orderId)).toBe(1);
  });

  it('answers 422 to a key reused with another amount', async () => {
    const body = order();
    const key = randomUUID();
    expect((await place(body, key)).status).toBe(201);
    const reused = await place({ ...body, amountCents: 1 }, key);
    expect(reused.status).toBe(422);
    expect(reused.headers.get('content-type')).toContain('application/problem+json');
    expect(await chargeCount(payments, body.orderId)).toBe(1);
  });

  it('refuses an order without a key, and a malformed key, before calling payments', async () => {
    const body = order();
    expect((await place(body)).status).toBe(400);
    expect((await place(body, 'é')).status).toBe(400);
    expect(await chargeCount(payments, body.orderId)).toBe(0);
  });
});
