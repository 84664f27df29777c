import { IdempotencyCoordinator, MemoryStore } from '@idempotency-chain/idempotency';
import type { Redis } from 'ioredis';
import { connect, countMatching, deleteMatching } from './redis-tools';

/** The lab's services, outermost first. */
export const SERVICES = ['gateway', 'orders', 'payments'] as const;
type Service = (typeof SERVICES)[number];
const OPERATIONS: Record<Service, string> = { gateway: 'gateway.checkout', orders: 'orders.place', payments: 'payments.charge' };

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

/**
 * Check that every hop stored its record where `recordKeys` says, so the
 * clean-up cannot silently miss one (the services' key layout is theirs:
 * any key naming the record key counts).
 */
export async function assertRecordsFound(client: Redis, checkout: Checkout): Promise<void> {
  const keys = recordKeys(checkout);
  const missing: string[] = [];
  for (const service of SERVICES) if ((await countMatching(client, `*${keys[service]}*`)) === 0) missing.push(service);
  if (missing.length > 0)
    throw new Error(
      `no Redis record found for ${missing.join(', ')} under the recomputed record key: has the lab's idempotency scope or operation changed?`,
    );
}

/** Delete every key naming one of this checkout's records or its order id; resolves with the count. */
export async function cleanUpCheckout(checkout: Checkout): Promise<number> {
  const client = await connect();
  try {
    let deleted = 0;
    for (const token of [...Object.values(recordKeys(checkout)), checkout.orderId]) deleted += await deleteMatching(client, `*${token}*`);
    return deleted;
  } finally {
    await client.quit();
  }
}
