import { randomUUID } from 'node:crypto';
import { formatIdempotencyKey, parseIdempotencyKey } from '@idempotency-chain/idempotency';
import { deriveBusinessKey, deriveChildKey } from './derived-key';

/**
 * Where the `Idempotency-Key` of an outbound call comes from.
 *
 * - `propagate` (default): one key per logical call, resolved before the first
 *   attempt and sent on every attempt.
 * - `per-attempt`: a fresh key on every attempt. This is the bug the lab
 *   demonstrates — each retry looks like a new intent — never use it in production.
 * - `none`: no key at all.
 */
export type KeyPolicy = 'propagate' | 'per-attempt' | 'none';

/** What a call says about its own key. */
export interface KeySources {
  /** A key the caller chose; sent verbatim. */
  key?: string;
  /** Business identity the key is derived from when no key is bound. */
  businessKey?: string;
  /** Names one sub-call of the parent intent; derives a child key. */
  callName?: string;
  /** The key bound by the inbound request, if any. */
  inboundKey?: string;
}

/**
 * The intent's key, resolved once per call before the first attempt.
 *
 * Under `propagate`, in order: the explicit `key`; else the inbound key; else
 * a key derived from `businessKey`; else a random UUID. A `callName` turns the
 * inbound or business key into a child key (see `deriveChildKey`), so several
 * sub-calls of one intent never share a key and a retried parent reproduces
 * the same children. `per-attempt` and `none` resolve nothing here.
 *
 * @throws when the explicit key is not a key every hop would accept.
 * @example
 * resolveIntentKey('propagate', { inboundKey: 'k-1' });                     // 'k-1'
 * resolveIntentKey('propagate', { inboundKey: 'k-1', callName: 'charge' }); // deriveChildKey('k-1', 'charge')
 * resolveIntentKey('propagate', {});                                        // a fresh UUID, once per call
 */
export function resolveIntentKey(policy: KeyPolicy, sources: KeySources): string | undefined {
  if (policy !== 'propagate') return undefined;
  if (sources.key !== undefined) return checkedKey(sources.key);
  const parent =
    sources.inboundKey ?? (sources.businessKey !== undefined ? deriveBusinessKey(sources.businessKey) : undefined);
  if (parent === undefined) return randomUUID();
  return sources.callName === undefined ? parent : deriveChildKey(parent, sources.callName);
}

/**
 * The key sent on one attempt: the intent's, or a fresh one under `per-attempt`.
 *
 * @example
 * const intent = resolveIntentKey(policy, sources); // before the loop
 * for (...) send(keyForAttempt(policy, intent));    // inside it
 */
export function keyForAttempt(policy: KeyPolicy, intentKey: string | undefined): string | undefined {
  return policy === 'per-attempt' ? randomUUID() : intentKey;
}

// A key that would not read back identically at the next hop protects nothing.
function checkedKey(key: string): string {
  if (parseIdempotencyKey(formatIdempotencyKey(key)) !== key) {
    throw new TypeError('Idempotency key does not survive the header round trip');
  }
  return key;
}
