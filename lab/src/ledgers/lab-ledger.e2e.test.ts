import { PrivateRedis } from '@idempotency-chain/local-processes';
import { randomUUID } from 'node:crypto';
import { bootLabService, chargeCount, type LabService, post } from '../testing';

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const order = () => ({ orderId: `o-${randomUUID()}`, account: 'acct-1', amountCents: 500 });

/** The store's environment; on Redis, a Redis of the test's own for the records and the ledger. */
const stores: Array<[string, () => Promise<{ env: Record<string, string>; stop?: () => Promise<void> }>]> = [
  ["memory (the lab's in-process ledger)", async () => ({ env: { IDEMPOTENCY_STORE: 'memory' } })],
  [
    "redis (the lab's Redis ledger)",
    async () => {
      const redis = await PrivateRedis.start();
      return { env: { IDEMPOTENCY_STORE: 'redis', REDIS_URL: redis.url }, stop: () => redis.stop() };
    },
  ],
  ["postgres (payments' own ledger)", async () => ({ env: { IDEMPOTENCY_STORE: 'postgres', DATABASE_URL } })],
];

describe.each(stores)('payments run by the lab on %s', (_store, start) => {
  let payments: LabService;
  let stop: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    const store = await start();
    stop = store.stop;
    payments = await bootLabService('payments', store.env);
  });
  afterAll(async () => {
    await payments?.app.close();
    await stop?.();
  });

  it('charges once per key, and replays', async () => {
    const body = order();
    const key = randomUUID();
    const first = await post(payments, '/charges', body, key);
    const again = await post(payments, '/charges', body, key);
    expect([first.status, again.status]).toEqual([201, 201]);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await chargeCount(payments, body.orderId)).toBe(1);
  });

  it('keeps the fault points in front of the ledger: a decline before the write charges nothing', async () => {
    const armed = await fetch(`${payments.url}/lab/faults`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ declineBeforeSideEffect: 1 }),
    });
    expect(armed.status).toBe(204);
    const body = order();
    expect((await post(payments, '/charges', body, randomUUID())).status).toBe(402);
    expect(await chargeCount(payments, body.orderId)).toBe(0);
  });
});
