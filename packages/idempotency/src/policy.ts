import { isFinalOutcome, type OutcomeRule } from './outcome';

/** What to do when a request finds its key held by another execution. */
export type InFlightPolicy = 'wait' | 'reject';

/** What to do when the store cannot be reached. */
export type StoreFailurePolicy = 'fail-closed' | 'fail-open';

/**
 * How one operation is protected. Every field has a default; an operation
 * overrides only what it must.
 */
export interface OperationPolicy {
  /**
   * How long a completed result is kept and replayed, in milliseconds.
   * Must outlive the longest retry window of every caller: a retry that
   * arrives after it re-executes. Default 24 h.
   */
  retentionMs: number;
  /** How long a claim holds without a heartbeat, in milliseconds. Default 10 s. */
  leaseMs: number;
  /**
   * Interval of the heartbeat that renews the lease while the action runs,
   * in milliseconds; `0` turns it off (the lab's naive variant). Default a
   * third of the lease, so two renewals can fail before the lease runs out.
   */
  heartbeatMs: number;
  /** `wait` for the running execution (default) or answer 409 at once. */
  inFlight: InFlightPolicy;
  /** Longest a duplicate waits, whatever deadline its caller sent. Default 30 s. */
  maxWaitMs: number;
  /** Default `fail-closed`: no protection, no execution. */
  onStoreFailure: StoreFailurePolicy;
  /** Which results are stored; the others release the key. */
  isFinal: OutcomeRule;
  /**
   * Run the action inside a store transaction and complete the record in
   * that same transaction (stores that implement `TransactionalStore`, e.g.
   * `PostgresStore`): the action finds it as `ExecutionContext.transaction`
   * and writes its side effect through it, so the side effect and the
   * completion commit together or not at all. A thrown error, a result that
   * is not final, or a lost lease rolls the side effect back. Unset (the
   * default): the store's ordinary completion after the action.
   */
  transactional?: boolean;
}

/** The defaults every operation starts from. */
export const DEFAULT_POLICY: Readonly<OperationPolicy> = Object.freeze({
  retentionMs: 24 * 60 * 60 * 1000,
  leaseMs: 10_000,
  heartbeatMs: 10_000 / 3,
  inFlight: 'wait',
  maxWaitMs: 30_000,
  onStoreFailure: 'fail-closed',
  isFinal: isFinalOutcome,
});

/**
 * Merge policy layers, later ones winning; a field present but `undefined`
 * is ignored, so it never erases a default. A lease given without a
 * heartbeat in the same or a later layer gets the default heartbeat ratio,
 * so a shorter lease is never outlived by its renewal interval; a heartbeat
 * of `0` (off) holds whatever lease comes after it.
 */
export function resolvePolicy(...layers: Array<Partial<OperationPolicy> | undefined>): OperationPolicy {
  const given = layers.map(
    (layer) => Object.fromEntries(Object.entries(layer ?? {}).filter(([, value]) => value !== undefined)) as Partial<OperationPolicy>,
  );
  const merged = Object.assign({}, DEFAULT_POLICY, ...given) as OperationPolicy;
  const lastWith = (field: keyof OperationPolicy) => given.findLastIndex((layer) => field in layer);
  const heartbeatAt = lastWith('heartbeatMs');
  if (heartbeatAt < 0 || (heartbeatAt < lastWith('leaseMs') && merged.heartbeatMs !== 0)) {
    merged.heartbeatMs = Math.floor(merged.leaseMs / 3);
  }
  return merged;
}
