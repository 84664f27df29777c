import type { RequestIdentity } from '@idempotency-chain/idempotency';
import { createHash } from 'node:crypto';

/**
 * Keys derived from other keys, deterministically, so a retry of the parent
 * call reproduces exactly the keys of its first run.
 *
 * Both functions return a UUIDv8 (RFC 9562's layout for custom UUIDs): the
 * first 128 bits of a SHA-256, with the version and variant bits set. 122 bits
 * of hash make collisions between different inputs negligible, and the result
 * looks like any other key in logs and stores.
 */

/**
 * The key of one named sub-call of a parent intent: UUIDv8 of
 * SHA-256(`parentKey` + "\n" + `callName`). A key is printable ASCII, so the
 * newline cannot occur in it and no (parent, name) pair can spell another.
 *
 * @example
 * deriveChildKey('order-42', 'reserve-stock'); // same value on every retry of order-42
 * deriveChildKey('order-42', 'charge-card');   // a different key, never colliding
 */
export function deriveChildKey(parentKey: string, callName: string): string {
  return uuidV8(`${parentKey}\n${callName}`);
}

/**
 * The key of an intent identified by business data rather than by a caller's
 * key: UUIDv8 of SHA-256("business\n" + `businessKey`). Two calls naming the
 * same business identity (e.g. `order:42:charge`) share one key, whichever
 * process makes them.
 *
 * Business ids are often per tenant (two tenants each have an order 42):
 * with a `scope` (the caller's, as the hop resolved it; `''` for a shared
 * one), the key is UUIDv8 of SHA-256("business-in-scope\n" + JSON of
 * [scope, businessKey]), one per caller. The client passes the call's
 * `scope`, else that of the request it serves.
 *
 * @example
 * client.post('/charges', charge, { businessKey: `order:${orderId}:charge` });
 * deriveBusinessKey('order-42', 'tenant:a') !== deriveBusinessKey('order-42', 'tenant:b');
 *
 * @public
 */
export function deriveBusinessKey(businessKey: string, scope = ''): string {
  return uuidV8(scope === '' ? `business\n${businessKey}` : `business-in-scope\n${JSON.stringify([scope, businessKey])}`);
}

/**
 * The key a hop sends downstream for the request it runs: UUIDv8 of
 * SHA-256("hop\n" + JSON of [service, operation, scope, key]). Two callers
 * sending one key have two records at the hop, and so two keys downstream:
 * they can never share a downstream record. A retry of one caller's request
 * has the same record, and so the same key, at every depth. (JSON makes the
 * tuple unambiguous: no two tuples spell the same input.)
 *
 * @example
 * deriveHopKey({ service: 'gateway', operation: 'gateway.checkout', scope: 'account:a', key: 'order-1001' });
 *
 * @public
 */
export function deriveHopKey(hop: Pick<RequestIdentity, 'service' | 'operation' | 'scope' | 'key'>): string {
  return uuidV8(`hop\n${JSON.stringify([hop.service, hop.operation, hop.scope, hop.key])}`);
}

function uuidV8(input: string): string {
  const bytes = createHash('sha256').update(input).digest().subarray(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x80; // version 8
  bytes[8] = (bytes[8]! & 0x3f) | 0x80; // variant 10xx
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
