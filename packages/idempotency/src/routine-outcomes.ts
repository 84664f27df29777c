import { IdempotencyOutcome, type IdempotencyObserver } from './observer';

/** The outcomes nearly every request reports: an execution stored or given back, a replay, a wait, a 409. */
export const ROUTINE_OUTCOMES: ReadonlySet<IdempotencyOutcome> = new Set([
  IdempotencyOutcome.Executed,
  IdempotencyOutcome.Replayed,
  IdempotencyOutcome.Waited,
  IdempotencyOutcome.Released,
  IdempotencyOutcome.RejectedInFlight,
]);

/**
 * Marks an observer whose `record` never reads the `keyHash` of an event
 * of a {@link ROUTINE_OUTCOMES routine outcome}: the Prometheus metrics, and
 * a fan-out of such observers only. Hashing a key is a keyed HMAC, 2 to
 * 4 µs of a request's CPU: with only such an observer, and nobody on the
 * outcome channel, a routine event carries `keyHash: ''` and no key is
 * hashed. Every other event, and every event any other observer gets,
 * carries the hash as documented.
 */
export const ROUTINE_KEY_HASH_UNREAD = Symbol('idempotency-chain.routine-key-hash-unread');

/** Whether `observer` is marked with {@link ROUTINE_KEY_HASH_UNREAD}. */
export function readsRoutineKeyHash(observer: IdempotencyObserver): boolean {
  return (observer as { [ROUTINE_KEY_HASH_UNREAD]?: boolean })[ROUTINE_KEY_HASH_UNREAD] !== true;
}
