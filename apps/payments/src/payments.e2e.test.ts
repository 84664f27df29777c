import { bootService, type BootedService } from '@idempotency-chain/lab-service';
import { randomUUID } from 'node:crypto';
import { PaymentsModule } from './payments.module';

const register = (config: Parameters<typeof PaymentsModule.register>[0]) => PaymentsModule.register(config);

async function post(service: BootedService, body: unknown, key?: string) {
  const response = await fetch(`${service.url}/charges`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key ? { 'idempotency-key': key } : {}) },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

async function ledgerCount(service: BootedService, orderId: string): Promise<number> {
  const response = await fetch(`${service.url}/charges?orderId=${orderId}`);
  return ((await response.json()) as { count: number }).count;
}

describe('payments over HTTP (propagated key policy)', () => {
  let payments: BootedService;
  beforeAll(async () => {
    payments = await bootService('payments', register, { KEY_POLICY: 'propagated', IDEMPOTENCY_STORE: 'memory' });
  });
  afterAll(() => payments.app.close());

  const order = () => ({ orderId: `o-${randomUUID()}`, account: 'acct-1', amountCents: 500 });

  it('charges once and replays the same answer with Idempotent-Replayed', async () => {
    const body = order();
    const key = randomUUID();
    const first = await post(payments, body, key);
    const again = await post(payments, body, `"${key}"`);
    expect(first.status).toBe(201);
    expect(JSON.parse(first.text)).toMatchObject({ orderId: body.orderId, amountCents: 500, status: 'captured' });
    expect(again.status).toBe(201);
    expect(again.text).toBe(first.text);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await ledgerCount(payments, body.orderId)).toBe(1);
  });

  it('answers 422 to a key reused with another amount and charges nothing more', async () => {
    const body = order();
    const key = randomUUID();
    expect((await post(payments, body, key)).status).toBe(201);
    const reused = await post(payments, { ...body, amountCents: 900 }, key);
    expect(reused.status).toBe(422);
    expect(reused.headers.get('content-type')).toContain('application/problem+json');
    expect(await ledgerCount(payments, body.orderId)).toBe(1);
  });

  it('refuses a charge without a key with a 400 problem document', async () => {
    const body = order();
    const refused = await post(payments, body);
    expect(refused.status).toBe(400);
    expect(refused.headers.get('content-type')).toContain('application/problem+json');
    expect(await ledgerCount(payments, body.orderId)).toBe(0);
  });

  it.each([
    ['a negative amount', { amountCents: -5 }],
    ['a missing account', { account: undefined }],
    ['an unknown field', { coupon: 'FREE' }],
  ])('refuses %s with 400, and the corrected request reuses the key', async (_name, change) => {
    const body = order();
    const key = randomUUID();
    const bad = await post(payments, { ...body, ...change }, key);
    expect(bad.status).toBe(400);
    expect(bad.headers.get('content-type')).toContain('application/problem+json');
    expect(await ledgerCount(payments, body.orderId)).toBe(0);
    expect((await post(payments, body, key)).status).toBe(201);
    expect(await ledgerCount(payments, body.orderId)).toBe(1);
  });

  it('refuses a body that is not JSON with a problem document', async () => {
    const refused = await post(payments, '{"orderId":', randomUUID());
    expect(refused.status).toBe(400);
    expect(refused.headers.get('content-type')).toContain('application/problem+json');
  });

  it('has no fault hooks when the lab is not enabled', async () => {
    const response = await fetch(`${payments.url}/lab/faults`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ crashAfterSideEffect: 1 }),
    });
    expect(response.status).toBe(404);
  });

  it('reports health with its store, and metrics in Prometheus text', async () => {
    const health = await fetch(`${payments.url}/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ status: 'ok', info: { idempotencyStore: { status: 'up' } } });
    const metrics = await (await fetch(`${payments.url}/metrics`)).text();
    expect(metrics).toContain('idempotency_events_total');
  });
});

describe('payments with no protection (none)', () => {
  let payments: BootedService;
  beforeAll(async () => {
    payments = await bootService('payments', register, { KEY_POLICY: 'none', IDEMPOTENCY_STORE: 'memory' });
  });
  afterAll(() => payments.app.close());

  it('charges every request, key or not', async () => {
    const body = { orderId: `o-${randomUUID()}`, account: 'acct-1', amountCents: 500 };
    const key = randomUUID();
    expect((await post(payments, body, key)).status).toBe(201);
    expect((await post(payments, body, key)).status).toBe(201);
    expect(await ledgerCount(payments, body.orderId)).toBe(2);
  });
});

describe('payments with the lab enabled', () => {
  let payments: BootedService;
  beforeAll(async () => {
    payments = await bootService('payments', register, { KEY_POLICY: 'propagated', IDEMPOTENCY_STORE: 'memory', LAB_FAULTS: '1' });
  });
  afterAll(() => payments.app.close());

  it('arms faults from loopback', async () => {
    const armed = await fetch(`${payments.url}/lab/faults`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ slowFirstAttemptMs: 10 }),
    });
    expect(armed.status).toBe(204);
    expect(await (await fetch(`${payments.url}/lab/faults`)).json()).toEqual({ slowFirstAttemptMs: 10 });
  });
});

describe('payments on PostgreSQL (records and ledger in one database)', () => {
  let payments: BootedService;
  beforeAll(async () => {
    payments = await bootService('payments', register, {
      KEY_POLICY: 'propagated',
      IDEMPOTENCY_STORE: 'postgres',
      DATABASE_URL: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
    });
  });
  afterAll(() => payments.app.close());

  it('charges once, in the transaction that completes the record, and replays', async () => {
    const body = { orderId: `o-${randomUUID()}`, account: 'acct-1', amountCents: 500 };
    const key = randomUUID();
    const first = await post(payments, body, key);
    const again = await post(payments, body, key);
    expect(first.status).toBe(201);
    expect(again.text).toBe(first.text);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await ledgerCount(payments, body.orderId)).toBe(1);
  });

  it('refuses a bad body before anything is written', async () => {
    const body = { orderId: `o-${randomUUID()}`, account: 'acct-1', amountCents: -1 };
    expect((await post(payments, body, randomUUID())).status).toBe(400);
    expect(await ledgerCount(payments, body.orderId)).toBe(0);
  });
});
