import { bootLabService, chargeCount, post, TEST_CREDENTIALS, type LabService } from '@idempotency-chain/lab/testing';
import type { Redis } from 'ioredis';
import { randomUUID } from 'node:crypto';
import { assertRecordsFound, cleanUpCheckout, hopIdentities, recordKeys, STORES, type Checkout } from './e2e-records';
import { DATABASE_URL } from './pg-tools';
import { connect, REDIS_URL } from './redis-tools';

/** The account the gateway's test key names (`TEST_CREDENTIALS`). */
const ACCOUNT = Object.values(JSON.parse(TEST_CREDENTIALS.GATEWAY_API_KEYS!) as Record<string, string>)[0]!;

describe('recordKeys', () => {
  const checkout = { key: 'k-1', account: 'acct-a', orderId: 'o-1' };

  test("only the gateway gets the caller's key; each next hop gets one derived from the record before it", () => {
    const { gateway, orders, payments } = hopIdentities(checkout);
    expect(gateway.key).toBe('k-1');
    expect(new Set([gateway.key, orders.key, payments.key]).size).toBe(3);
  });

  test("two accounts sending one key have three records each, none the other's", () => {
    const a = Object.values(recordKeys(checkout));
    const b = Object.values(recordKeys({ ...checkout, account: 'acct-b' }));
    expect(new Set([...a, ...b]).size).toBe(6);
  });

  test('each hop has its own record, a hash with no user text in it', () => {
    const keys = Object.values(recordKeys(checkout));
    expect(new Set(keys).size).toBe(3);
    for (const key of keys) for (const text of ['k-1', 'acct-a', 'gateway', 'orders', 'payments']) expect(key).not.toContain(text);
  });
});

// The three services as the end-to-end section runs them (stores per `STORES`), in this process over real HTTP:
// the records the section recomputes must be the ones the services wrote.
describe('the records of a checkout through gateway -> orders -> payments', () => {
  const services: LabService[] = [];
  let gateway: LabService;
  let payments: LabService;
  let redis: Redis;
  const checkouts: Checkout[] = [];

  beforeAll(async () => {
    // Each app's own providers: the lab's propagated policy on these stores changes none of them.
    // Records that a failed test leaves behind expire within minutes, as the section's do.
    const env = { KEY_POLICY: 'propagated', REDIS_URL, DATABASE_URL, IDEMPOTENCY_RETENTION_MS: '600000' };
    const boot = async (service: 'gateway' | 'orders' | 'payments', own: Record<string, string>) => {
      const booted = await bootLabService(service, { ...env, IDEMPOTENCY_STORE: STORES[service], ...own });
      services.push(booted);
      return booted;
    };
    payments = await boot('payments', {});
    const orders = await boot('orders', { PAYMENTS_URL: payments.url });
    gateway = await boot('gateway', { ORDERS_URL: orders.url });
    redis = await connect();
  });
  afterAll(async () => {
    // What a failed assertion left (deleting twice deletes nothing).
    for (const checkout of checkouts) await cleanUpCheckout(checkout);
    await redis?.quit();
    for (const { app } of services.reverse()) await app.close();
  });

  const checkOut = async (): Promise<Checkout> => {
    const checkout = { key: `bench-test-${randomUUID()}`, account: ACCOUNT, orderId: `bench-test-${randomUUID()}` };
    checkouts.push(checkout);
    const answer = await post(gateway, '/checkout', { orderId: checkout.orderId, amountCents: 500 }, checkout.key);
    expect(answer.status).toBe(201);
    return checkout;
  };

  test("finds each hop's record where it lives, and the clean-up deletes this checkout's records and charge, no other's", async () => {
    const [checkout, other] = [await checkOut(), await checkOut()];
    await assertRecordsFound(redis, checkout);
    await assertRecordsFound(redis, other);

    expect(await cleanUpCheckout(checkout)).toBeGreaterThan(0);
    await expect(assertRecordsFound(redis, checkout)).rejects.toThrow('no record found for gateway, orders, payments');
    expect(await chargeCount(payments, checkout.orderId)).toBe(0);
    await assertRecordsFound(redis, other);
    expect(await chargeCount(payments, other.orderId)).toBe(1);

    await cleanUpCheckout(other);
    await expect(assertRecordsFound(redis, other)).rejects.toThrow('no record found for gateway, orders, payments');
  });
});
