import { GatewayModule } from '@idempotency-chain/gateway';
import { OrdersModule } from '@idempotency-chain/orders';
import { PaymentsModule } from '@idempotency-chain/payments';
import { createServiceApp } from '@idempotency-chain/service-runtime';
import { bootService, chargeCount, post, TEST_ACCOUNT, TEST_CREDENTIALS, type Target } from '@idempotency-chain/service-runtime/testing';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { Redis } from 'ioredis';
import { randomUUID } from 'node:crypto';
import { assertRecordsFound, cleanUpCheckout, hopIdentities, recordKeys, STORES, type Checkout } from './e2e-records';
import { DATABASE_URL } from './pg-tools';
import { connect, REDIS_URL } from './redis-tools';

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
  const apps: NestFastifyApplication[] = [];
  let gateway: Target;
  let payments: Target;
  let redis: Redis;
  const checkouts: Checkout[] = [];

  /** Boot a service whose module reads its environment, on an ephemeral loopback port. */
  const boot = async (root: Promise<Parameters<typeof createServiceApp>[0]>): Promise<string> => {
    const app = await createServiceApp(await root);
    apps.push(app);
    await app.listen(0, '127.0.0.1');
    return (await app.getUrl()).replace('[::1]', '127.0.0.1');
  };

  beforeAll(async () => {
    // Records that a failed test leaves behind expire within minutes, as the section's do.
    const env = { LOG_LEVEL: 'silent', PORT: '0', ...TEST_CREDENTIALS, REDIS_URL, DATABASE_URL, IDEMPOTENCY_RETENTION_MS: '600000' };
    const paid = await bootService('payments', (config) => createServiceApp(PaymentsModule.register(config)), {
      ...env,
      IDEMPOTENCY_STORE: STORES.payments,
    });
    apps.push(paid.app);
    payments = paid;
    const orders = await boot(OrdersModule.forRoot({ ...env, IDEMPOTENCY_STORE: STORES.orders, PAYMENTS_URL: paid.url }));
    const url = await boot(GatewayModule.forRoot({ ...env, IDEMPOTENCY_STORE: STORES.gateway, ORDERS_URL: orders }));
    gateway = { url, authorization: `Bearer ${Object.keys(JSON.parse(TEST_CREDENTIALS.GATEWAY_API_KEYS!) as object)[0]}` };
    redis = await connect();
  });
  afterAll(async () => {
    // What a failed assertion left (deleting twice deletes nothing).
    for (const checkout of checkouts) await cleanUpCheckout(checkout);
    await redis?.quit();
    for (const app of apps.reverse()) await app.close();
  });

  const checkOut = async (): Promise<Checkout> => {
    const checkout = { key: `bench-test-${randomUUID()}`, account: TEST_ACCOUNT, orderId: `bench-test-${randomUUID()}` };
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
