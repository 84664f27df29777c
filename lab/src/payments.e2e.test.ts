import { randomUUID } from 'node:crypto';
import { bootLabService, chargeCount, type LabService, post } from './testing';

const order = () => ({ orderId: `o-${randomUUID()}`, account: 'acct-1', amountCents: 500 });
const arm = (service: LabService, plan: object) =>
  fetch(`${service.url}/lab/faults`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(plan) });

describe('payments run by the lab', () => {
  let unprotected: LabService;
  let payments: LabService;
  beforeAll(async () => {
    unprotected = await bootLabService('payments', { KEY_POLICY: 'none', IDEMPOTENCY_STORE: 'memory' });
    payments = await bootLabService('payments', { KEY_POLICY: 'propagated', IDEMPOTENCY_STORE: 'memory' });
  });
  afterAll(async () => {
    await unprotected.app.close();
    await payments.app.close();
  });

  it('with no protection (none), charges every request, key or not', async () => {
    const body = order();
    const key = randomUUID();
    expect((await post(unprotected, '/charges', body, key)).status).toBe(201);
    expect((await post(unprotected, '/charges', body, key)).status).toBe(201);
    expect(await chargeCount(unprotected, body.orderId)).toBe(2);
  });

  it('arms faults from loopback', async () => {
    const armed = await arm(payments, { slowFirstAttemptMs: 10 });
    expect(armed.status).toBe(204);
    expect(await (await fetch(`${payments.url}/lab/faults`)).json()).toEqual({ slowFirstAttemptMs: 10 });
  });

  it('declines at the fault point before the ledger, stores the decline, and charges nothing', async () => {
    expect((await arm(payments, { declineBeforeSideEffect: 1 })).status).toBe(204);
    const body = order();
    const key = randomUUID();
    const first = await post(payments, '/charges', body, key);
    const again = await post(payments, '/charges', body, key);
    expect([first.status, again.status]).toEqual([402, 402]);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await chargeCount(payments, body.orderId)).toBe(0);
  });

  it('stalls only a first attempt, by the request-attempt its caller sent', async () => {
    expect((await arm(payments, { stallBeforeSideEffectMs: 60_000 })).status).toBe(204);
    const retry = await fetch(`${payments.url}/charges`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: payments.authorization,
        'idempotency-key': randomUUID(),
        'request-attempt': '2',
      },
      body: JSON.stringify(order()),
    });
    expect(retry.status).toBe(201);
    expect((await arm(payments, {})).status).toBe(204);
  });

  it('adds to the armed faults over PATCH: counts add up, durations are replaced', async () => {
    expect((await arm(payments, { loseReplies: 1, slowReplyMs: 10 })).status).toBe(204);
    const added = await fetch(`${payments.url}/lab/faults`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ loseReplies: 2, slowReplyMs: 20 }),
    });
    expect(added.status).toBe(204);
    expect(await (await fetch(`${payments.url}/lab/faults`)).json()).toEqual({ loseReplies: 3, slowReplyMs: 20 });
    expect((await arm(payments, {})).status).toBe(204);
  });

  it('holds back one answer to a first attempt, after the charge, and no retry', async () => {
    expect((await arm(payments, { slowFirstReplies: 1, slowReplyMs: 400 })).status).toBe(204);
    const send = async (attempt: number) => {
      const started = Date.now();
      const response = await fetch(`${payments.url}/charges`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: payments.authorization,
          'idempotency-key': randomUUID(),
          'request-attempt': String(attempt),
        },
        body: JSON.stringify(order()),
      });
      return { status: response.status, ms: Date.now() - started };
    };
    const retry = await send(2);
    const slow = await send(1);
    const next = await send(1);
    expect([retry.status, slow.status, next.status]).toEqual([201, 201, 201]);
    expect(slow.ms).toBeGreaterThanOrEqual(400);
    expect(await (await fetch(`${payments.url}/lab/faults`)).json()).toEqual({ slowFirstReplies: 0, slowReplyMs: 400 });
  });

  it('freezes the whole process once before the side effect (a stalled holder), then charges as usual', async () => {
    expect((await arm(payments, { stallHolders: 1, stallHolderMs: 500 })).status).toBe(204);
    const body = order();
    const started = Date.now();
    // The freeze stops this test's timers too: measured by the clock, which keeps running.
    const stalled = await post(payments, '/charges', body, randomUUID());
    expect(stalled.status).toBe(201);
    expect(Date.now() - started).toBeGreaterThanOrEqual(500);
    expect(await chargeCount(payments, body.orderId)).toBe(1);
    expect(await (await fetch(`${payments.url}/lab/faults`)).json()).toEqual({ stallHolders: 0, stallHolderMs: 500 });
  });
});
