import { randomUUID } from 'node:crypto';
import { ConfigError } from './config.js';
import { PaymentsModule } from './payments.module.js';
import { bootPayments, chargeCount, post, type BootedPayments } from './payments.test-support.js';

const charge = (payments: BootedPayments, body: unknown, key?: string) => post(payments, '/charges', body, key);

describe('payments over HTTP, on PostgreSQL (records and ledger in one database)', () => {
  let payments: BootedPayments;
  beforeAll(async () => {
    payments = await bootPayments();
  });
  afterAll(() => payments.app.close());

  const order = () => ({ orderId: `o-${randomUUID()}`, account: 'acct-1', amountCents: 500 });

  it('charges once, in the transaction that completes the record, and replays the same answer with Idempotent-Replayed', async () => {
    const body = order();
    const key = randomUUID();
    const first = await charge(payments, body, key);
    const again = await charge(payments, body, `"${key}"`);
    expect(first.status).toBe(201);
    expect(JSON.parse(first.text)).toMatchObject({ orderId: body.orderId, amountCents: 500, status: 'captured' });
    expect(again.status).toBe(201);
    expect(again.text).toBe(first.text);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await chargeCount(payments, body.orderId)).toBe(1);
  });

  it('answers 422 to a key reused with another amount and charges nothing more', async () => {
    const body = order();
    const key = randomUUID();
    expect((await charge(payments, body, key)).status).toBe(201);
    const reused = await charge(payments, { ...body, amountCents: 900 }, key);
    expect(reused.status).toBe(422);
    expect(reused.headers.get('content-type')).toContain('application/problem+json');
    expect(await chargeCount(payments, body.orderId)).toBe(1);
  });

  it('refuses a charge without a key with a 400 problem document', async () => {
    const body = order();
    const refused = await charge(payments, body);
    expect(refused.status).toBe(400);
    expect(refused.headers.get('content-type')).toContain('application/problem+json');
    expect(await chargeCount(payments, body.orderId)).toBe(0);
  });

  it.each([
    ['a negative amount', { amountCents: -5 }],
    ['a missing account', { account: undefined }],
    ['an unknown field', { coupon: 'FREE' }],
  ])('refuses %s with 400, and the corrected request reuses the key', async (_name, change) => {
    const body = order();
    const key = randomUUID();
    const bad = await charge(payments, { ...body, ...change }, key);
    expect(bad.status).toBe(400);
    expect(bad.headers.get('content-type')).toContain('application/problem+json');
    expect(await chargeCount(payments, body.orderId)).toBe(0);
    expect((await charge(payments, body, key)).status).toBe(201);
    expect(await chargeCount(payments, body.orderId)).toBe(1);
  });

  it('refuses a body that is not JSON with a problem document', async () => {
    const refused = await charge(payments, '{"orderId":', randomUUID());
    expect(refused.status).toBe(400);
    expect(refused.headers.get('content-type')).toContain('application/problem+json');
  });

  it.each([
    ['no token', undefined],
    ['the token of another hop', 'Bearer test-token-of-orders-hop'],
  ])('answers a caller with %s 401, charging nothing and reading no ledger', async (_case, authorization) => {
    const body = order();
    const refused = await post({ url: payments.url, authorization }, '/charges', body, randomUUID());
    expect(refused.status).toBe(401);
    expect(refused.headers.get('content-type')).toContain('application/problem+json');
    expect(
      (await fetch(`${payments.url}/charges?orderId=${body.orderId}`, { headers: authorization ? { authorization } : {} })).status,
    ).toBe(401);
    expect(await chargeCount(payments, body.orderId)).toBe(0);
  });

  it('has no fault hooks: they exist only when the lab runs it', async () => {
    const response = await fetch(`${payments.url}/lab/faults`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ crashAfterSideEffect: 1 }),
    });
    expect(response.status).toBe(404);
  });

  it('reports health with its store (no broker under CHARGE_TRANSPORT=http), and metrics in Prometheus text', async () => {
    const health = await fetch(`${payments.url}/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({
      status: 'ok',
      info: { idempotencyStore: { status: 'up' } },
      error: {},
      details: { idempotencyStore: { status: 'up' } },
    });
    const metrics = await (await fetch(`${payments.url}/metrics`)).text();
    expect(metrics).toContain('idempotency_events_total');
  });
});

describe('payments on a store other than PostgreSQL', () => {
  it.each(['memory', 'redis'])(
    'IDEMPOTENCY_STORE=%s: is refused before anything is built, naming IDEMPOTENCY_STORE and DATABASE_URL',
    async (store) => {
      const refused = PaymentsModule.forRoot({ PAYMENTS_TOKEN: 'test-token-of-payments-hop', IDEMPOTENCY_STORE: store });
      await expect(refused).rejects.toBeInstanceOf(ConfigError);
      await expect(refused).rejects.toThrow(
        `IDEMPOTENCY_STORE="${store}" is not valid: expected postgres, with DATABASE_URL naming the database that keeps the records and the ledger`,
      );
    },
  );
});
