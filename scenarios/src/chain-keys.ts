import { deriveHopKey } from '@idempotency-chain/http-client';

/**
 * The key a checkout's intent has at each hop of the lab's chain, as the
 * services derive them (`deriveHopKey`): the caller's key at the gateway,
 * then the key of the gateway's record at orders, then the key of orders'
 * record at payments. The gateway's scope is its caller, the account its
 * key names (`user:acct-7`, as `principalScope` types it). What ties a hop's log lines to the caller's intent.
 *
 * @example
 * chainKeys('k-1', 'acct-7'); // { gateway: 'k-1', orders: '…', payments: '…' }
 */
export function chainKeys(key: string, account: string): { gateway: string; orders: string; payments: string } {
  const orders = deriveHopKey({ service: 'gateway', operation: 'gateway.checkout', scope: `user:${account}`, key });
  const payments = deriveHopKey({ service: 'orders', operation: 'orders.place', scope: '', key: orders });
  return { gateway: key, orders, payments };
}
