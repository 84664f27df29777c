import { IdempotencyCoordinator, MemoryStore } from '@idempotency-chain/idempotency';
import type { Redis } from 'ioredis';
import { Client } from 'pg';
import { DATABASE_URL } from './pg-tools';
import { connect, countMatching, deleteMatching } from './redis-tools';

/** The lab's services, outermost first. */
export const SERVICES = ['gateway', 'orders', 'payments'] as const;
type Service = (typeof SERVICES)[number];
const OPERATIONS: Record<Service, string> = { gateway: 'gateway.checkout', orders: 'orders.place', payments: 'payments.charge' };

/**
 * Where each hop keeps its records in the end-to-end section: Redis, but
 * payments, which requires PostgreSQL (its charge commits with its record).
 */
export const STORES: Readonly<Record<Service, 'redis' | 'postgres'>> = { gateway: 'redis', orders: 'redis', payments: 'postgres' };
const onRedis = SERVICES.filter((service) => STORES[service] === 'redis');

/** The checkout the end-to-end section sends, as far as record identity goes. */
export interface Checkout {
  key: string;
  account: string;
  orderId: string;
}

/**
 * Each hop's record key for one checkout, computed as the services compute
 * it: the gateway scopes its records by its caller, the account its key
 * names (`user:<account>`), orders and payments share one scope (`''`).
 */
export function recordKeys({ key, account }: Checkout): Record<Service, string> {
  // The coordinator hashes the identity; its store plays no part in that.
  const store = new MemoryStore();
  const keys = Object.fromEntries(
    SERVICES.map((service) => [
      service,
      new IdempotencyCoordinator({ service, store }).recordKey(OPERATIONS[service], service === 'gateway' ? `user:${account}` : '', key),
    ]),
  ) as Record<Service, string>;
  void store.close();
  return keys;
}

/** A client of `DATABASE_URL`, ended once `use` settles. */
async function withDatabase<T>(use: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: DATABASE_URL });
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end();
  }
}

/** payments' records naming `recordKey` (the store's key layout is its own: any key containing it counts). */
const PAYMENTS_RECORDS = "FROM idempotency_records WHERE store_key LIKE '%' || $1 || '%'";

/**
 * Check that every hop stored its record where `recordKeys` says, so the
 * clean-up cannot silently miss one (the services' key layout is theirs:
 * any key naming the record key counts).
 */
export async function assertRecordsFound(client: Redis, checkout: Checkout): Promise<void> {
  const keys = recordKeys(checkout);
  const missing: string[] = [];
  for (const service of onRedis) if ((await countMatching(client, `*${keys[service]}*`)) === 0) missing.push(service);
  const inDatabase = await withDatabase(async (db) =>
    Number((await db.query(`SELECT count(*) AS n ${PAYMENTS_RECORDS}`, [keys.payments])).rows[0].n),
  );
  if (inDatabase === 0) missing.push('payments');
  if (missing.length > 0)
    throw new Error(
      `no record found for ${missing.join(', ')} under the recomputed record key: has the lab's idempotency scope or operation changed?`,
    );
}

/** Delete every key or row naming one of this checkout's records or its order id; resolves with the count. */
export async function cleanUpCheckout(checkout: Checkout): Promise<number> {
  const keys = recordKeys(checkout);
  const client = await connect();
  let deleted = 0;
  try {
    for (const token of [...onRedis.map((service) => keys[service]), checkout.orderId])
      deleted += await deleteMatching(client, `*${token}*`);
  } finally {
    await client.quit();
  }
  return withDatabase(async (db) => {
    deleted += (await db.query(`DELETE ${PAYMENTS_RECORDS}`, [keys.payments])).rowCount ?? 0;
    deleted += (await db.query('DELETE FROM payments_ledger WHERE order_id = $1', [checkout.orderId])).rowCount ?? 0;
    return deleted;
  });
}
