import { deriveHopKey } from '@idempotency-chain/http-client';
import { IdempotencyCoordinator, MemoryStore, type RequestIdentity } from '@idempotency-chain/idempotency';
import { redisRecordKey } from '@idempotency-chain/idempotency/redis';
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

/** The checkout the end-to-end section sends, as far as record identity goes. */
export interface Checkout {
  key: string;
  account: string;
  orderId: string;
}

/** How one hop identifies the checkout: the record it runs it under (see `RequestIdentity`). */
export type HopIdentity = Pick<RequestIdentity, 'service' | 'operation' | 'scope' | 'key'>;

/**
 * How each hop identifies one checkout, as the services do: the gateway
 * scopes its records by its caller, the account its key names
 * (`user:<account>`), orders and payments share one scope (`''`). Only the
 * gateway gets the caller's key: each next hop gets the key the
 * http-client derives from the record before it (`deriveHopKey`).
 */
export function hopIdentities({ key, account }: Checkout): Record<Service, HopIdentity> {
  const identities = {} as Record<Service, HopIdentity>;
  let received = key;
  for (const service of SERVICES) {
    const identity = { service, operation: OPERATIONS[service], scope: service === 'gateway' ? `user:${account}` : '', key: received };
    identities[service] = identity;
    received = deriveHopKey(identity);
  }
  return identities;
}

/** Each hop's record key for one checkout: that of its identity (see `hopIdentities`), as the coordinator computes it. */
export function recordKeys(checkout: Checkout): Record<Service, string> {
  // The coordinator hashes the identity; its store plays no part in that.
  const store = new MemoryStore();
  const identities = hopIdentities(checkout);
  const keys = Object.fromEntries(
    SERVICES.map((service) => {
      const { operation, scope, key } = identities[service];
      return [service, new IdempotencyCoordinator({ service, store }).recordKey(operation, scope, key)];
    }),
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

/** The row of one record: `PostgresStore` keeps one per record key, in `idempotency_records`. */
const RECORD_ROW = 'FROM idempotency_records WHERE store_key = $1';

/**
 * A record's keys in Redis, whatever the prefix: `RedisStore` names each after its hash tag, the record key in
 * base64url (`{<tag>}`, with no character a glob reads as special), so the glob matches no other record's.
 */
const redisKeysOf = (recordKey: string) => `*${redisRecordKey(recordKey, '')}*`;

/** The hops whose records are in `store`, with their record keys. */
const recordsIn = (store: 'redis' | 'postgres', keys: Record<Service, string>) =>
  SERVICES.filter((service) => STORES[service] === store).map((service) => [service, keys[service]] as const);

/**
 * Check that every hop stored its record where `STORES` says, under the
 * key `recordKeys` computes, so the clean-up cannot silently miss one.
 */
export async function assertRecordsFound(client: Redis, checkout: Checkout): Promise<void> {
  const keys = recordKeys(checkout);
  const missing: string[] = [];
  for (const [service, recordKey] of recordsIn('redis', keys))
    if ((await countMatching(client, redisKeysOf(recordKey))) === 0) missing.push(service);
  await withDatabase(async (db) => {
    for (const [service, recordKey] of recordsIn('postgres', keys))
      if ((await db.query(`SELECT 1 ${RECORD_ROW}`, [recordKey])).rowCount === 0) missing.push(service);
  });
  if (missing.length > 0)
    throw new Error(
      `no record found for ${missing.join(', ')} under the recomputed record key: has a hop's idempotency scope, operation or key derivation changed?`,
    );
}

/** Delete this checkout's records, each where its hop keeps it, and its charges; resolves with the keys and rows deleted. */
export async function cleanUpCheckout(checkout: Checkout): Promise<number> {
  const keys = recordKeys(checkout);
  const client = await connect();
  let deleted = 0;
  try {
    for (const [, recordKey] of recordsIn('redis', keys)) deleted += await deleteMatching(client, redisKeysOf(recordKey));
  } finally {
    await client.quit();
  }
  return withDatabase(async (db) => {
    for (const [, recordKey] of recordsIn('postgres', keys)) deleted += (await db.query(`DELETE ${RECORD_ROW}`, [recordKey])).rowCount ?? 0;
    deleted += (await db.query('DELETE FROM payments_ledger WHERE order_id = $1', [checkout.orderId])).rowCount ?? 0;
    return deleted;
  });
}
