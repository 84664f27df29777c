/**
 * How many heartbeat intervals may pass without a renewal before a
 * holder counts as silent. A live holder's heartbeat renews its lease
 * between half an interval and one interval after its previous renewal
 * (see `heartbeat.ts`); the second interval is slack for a store round
 * trip, a busy event loop or a garbage-collection pause, so a holder that
 * is merely slow is never taken for a gone one.
 */
export const SILENT_AFTER_HEARTBEATS = 2;

/**
 * Whether the holder of an in-progress record is still running its
 * execution, as far as the store can tell:
 * - `alive`: it renewed its lease (or claimed it) within
 *   two heartbeat intervals (`SILENT_AFTER_HEARTBEATS`); or the store cannot
 *   tell, because the record names no heartbeat (the holder's heartbeat is
 *   off, so it never renews) or was written before records kept their last
 *   renewal. Releasing it ends an execution that may still run its side
 *   effect, and the retry that follows runs it a second time.
 * - `silent`: its last renewal (or its claim) is older than that: its
 *   process is gone, hung or cut off from the store.
 *
 * A record whose lease ran out is not in progress any more (an operator
 * finds it absent).
 *
 * @beta
 */
export type HolderState = 'alive' | 'silent';

/**
 * The {@link HolderState} of an in-progress record last renewed
 * `lastRenewalMsAgo` ms ago by a holder whose heartbeat renews every
 * `heartbeatMs`; either `undefined` when the record does not say.
 */
export function holderState(lastRenewalMsAgo: number | undefined, heartbeatMs: number | undefined): HolderState {
  if (lastRenewalMsAgo === undefined || heartbeatMs === undefined || heartbeatMs <= 0) return 'alive';
  return lastRenewalMsAgo > SILENT_AFTER_HEARTBEATS * heartbeatMs ? 'silent' : 'alive';
}
