import { randomUUID } from 'node:crypto';
import { formatIdempotencyKey, parseIdempotencyKey, type RequestIdentity } from '@idempotency-chain/idempotency';
import { deriveBusinessKey, deriveChildKey, deriveHopKey } from './derived-key';

/**
 * What a call says about its own key.
 *
 * @public
 */
export interface KeySources {
  /** A key the caller chose; sent verbatim. */
  key?: string;
  /** Business identity the key is derived from when no key is bound. */
  businessKey?: string;
  /** Names one sub-call of the parent intent; derives a child key. */
  callName?: string;
  /** The key bound by the inbound request, if any. */
  inboundKey?: string;
  /** The record the inbound request runs under at this hop, once identified (see `RequestContext.hop`). */
  hop?: RequestIdentity;
  /**
   * The caller's scope a `businessKey` is derived within (`'shared'`: one key
   * for every caller). Outranks the hop's; required when no hop identified
   * the request, whose caller the client cannot know.
   */
  scope?: string;
  /** Send an inbound key no hop identified as it came (see `IdempotentClientOptions.forwardUnboundKey`). */
  forwardUnboundKey?: boolean;
}

/**
 * Decides the `Idempotency-Key` of a call: `intentKey` once, before the
 * first attempt, and `attemptKey` for each attempt (the intent's key when
 * absent, which is what makes a retry recognisable as one).
 *
 * @example
 * // Keys from your own scheme, still one per intent:
 * const orderKeys: KeyStrategy = { intentKey: ({ businessKey }) => businessKey && `order-${businessKey}` };
 *
 * @public
 */
export interface KeyStrategy {
  /** The intent's key, once per logical call; `undefined` sends no key. */
  intentKey(sources: KeySources): string | undefined;
  /** The key attempt `attempt` (1-based) sends; the intent's key when absent. */
  attemptKey?(intentKey: string | undefined, attempt: number): string | undefined;
}

/**
 * Where the `Idempotency-Key` of an outbound call comes from.
 *
 * - `propagated` (default): one key per logical call, resolved before the
 *   first attempt and sent on every attempt (see {@link resolveIntentKey}).
 * - `none`: no key at all.
 * - a {@link KeyStrategy} of your own.
 *
 * @public
 */
export type KeyPolicy = 'propagated' | 'none' | KeyStrategy;

const PROPAGATED: KeyStrategy = {
  intentKey(sources) {
    if (sources.key !== undefined) return checkedKey(sources.key);
    const parent = parentKey(sources);
    if (parent === undefined) return randomUUID();
    return sources.callName === undefined ? parent : deriveChildKey(parent, sources.callName);
  },
};

/**
 * The key of the inbound intent, as it leaves this hop. The caller's own key
 * first; then a business key, which the code states and which outranks the
 * hop's guess from the body (its fingerprint, when the caller sent no key).
 * Each is bound to the caller, or refused when nothing says who the caller is.
 */
function parentKey(sources: KeySources): string | undefined {
  const { inboundKey, businessKey, hop } = sources;
  const callerChose = inboundKey !== undefined && !hop?.fingerprinted;
  if (callerChose) return hop ? deriveHopKey(hop) : unboundKey(inboundKey, sources.forwardUnboundKey);
  if (businessKey !== undefined) return deriveBusinessKey(businessKey, businessScope(sources));
  return hop ? deriveHopKey(hop) : undefined;
}

// Sent as it came, two callers' `order-1` would be one record downstream; a
// fresh key instead would charge again on the caller's retry. Neither is safe,
// so the call is refused unless every caller of this hop is one principal.
function unboundKey(inboundKey: string, forward = false): string {
  if (forward) return inboundKey;
  throw new Error(
    'An inbound Idempotency-Key is bound, but no @Idempotent route has identified the request, so the caller is unknown ' +
      "and the key cannot leave this hop without colliding with another caller's: make the call from an @Idempotent route " +
      "(after its interceptor), pass the call's own `key`, or set `forwardUnboundKey: true` when every caller of this hop is one trusted principal",
  );
}

// Business ids are per caller (every tenant has an order 42): the scope comes from the call or the hop, never by default.
function businessScope({ scope, hop }: KeySources): string {
  if (scope === 'shared') return '';
  if (scope !== undefined && scope !== '') return scope;
  if (scope === undefined && hop) return hop.scope;
  throw new TypeError(
    "A businessKey outside a request an @Idempotent route identified needs the caller's `scope` " +
      "(e.g. 'account:acct-7'), or `scope: 'shared'` when the business id is unique across callers",
  );
}

const NONE: KeyStrategy = { intentKey: () => undefined };

function strategyOf(policy: KeyPolicy): KeyStrategy {
  if (policy === 'propagated') return PROPAGATED;
  if (policy === 'none') return NONE;
  return policy;
}

/**
 * The intent's key, resolved once per call before the first attempt.
 *
 * Under `propagated`, in order: the explicit `key`; else the inbound key;
 * else a key derived from `businessKey`; else the hop's fingerprint; else a
 * random UUID. Once the hop has identified the inbound request (`hop`), the
 * inbound key and the fingerprint leave it as `deriveHopKey(hop)` and the
 * business key is derived within the caller's scope: two callers never send
 * one key downstream, and every retry of one sends the same. Without `hop`
 * the caller is unknown: an inbound key is refused (unless
 * `forwardUnboundKey`, then sent as it came) and a business key needs the
 * call's `scope`. A `callName`
 * turns the inbound or business key into a child key (see `deriveChildKey`),
 * so several sub-calls of one intent never share a key and a retried parent
 * reproduces the same children. `none` resolves nothing.
 *
 * @throws when the explicit key is not a key every hop would accept, when
 *   an inbound key has no `hop` (and no `forwardUnboundKey`), or when a
 *   business key has neither `hop` nor `scope`.
 * @example
 * resolveIntentKey('propagated', { inboundKey: 'k-1', hop });                // deriveHopKey(hop): the caller's record at this hop
 * resolveIntentKey('propagated', { inboundKey: 'k-1', hop, callName: 'c' }); // deriveChildKey(deriveHopKey(hop), 'c')
 * resolveIntentKey('propagated', { businessKey: 'order:42', scope: 'account:a' }); // deriveBusinessKey('order:42', 'account:a')
 * resolveIntentKey('propagated', { inboundKey: 'k-1' });                     // throws: whose k-1?
 * resolveIntentKey('propagated', { inboundKey: 'k-1', forwardUnboundKey: true }); // 'k-1'
 * resolveIntentKey('propagated', {});                                        // a fresh UUID, once per call
 *
 * @public
 */
export function resolveIntentKey(policy: KeyPolicy, sources: KeySources): string | undefined {
  const strategy = strategyOf(policy);
  return ownKey(strategy, strategy.intentKey(sources));
}

/**
 * The key sent on one attempt (1-based): the intent's, unless a strategy
 * decides otherwise.
 *
 * @example
 * const intent = resolveIntentKey(policy, sources); // before the loop
 * for (...) send(keyForAttempt(policy, intent, n)); // inside it
 */
export function keyForAttempt(policy: KeyPolicy, intentKey: string | undefined, attempt: number): string | undefined {
  const strategy = strategyOf(policy);
  return strategy.attemptKey ? ownKey(strategy, strategy.attemptKey(intentKey, attempt)) : intentKey;
}

// The built-in strategies only make keys that are valid; one of the caller's is checked like an explicit key.
function ownKey(strategy: KeyStrategy, key: string | undefined): string | undefined {
  return key === undefined || strategy === PROPAGATED ? key : checkedKey(key);
}

/** `keyPolicy` as given to the client: refused at construction when it is neither a name nor a strategy. */
export function checkKeyPolicy(policy: unknown): KeyPolicy {
  if (policy === 'propagated' || policy === 'none') return policy;
  if (typeof (policy as Partial<KeyStrategy> | null)?.intentKey === 'function') return policy as KeyStrategy;
  throw new TypeError(`keyPolicy must be 'propagated', 'none' or a KeyStrategy (got ${JSON.stringify(policy)})`);
}

// A key that would not read back identically at the next hop protects nothing.
function checkedKey(key: string): string {
  if (parseIdempotencyKey(formatIdempotencyKey(key)) !== key) {
    throw new TypeError('Idempotency key does not survive the header round trip');
  }
  return key;
}
