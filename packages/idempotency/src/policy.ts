import { InvalidPolicyError } from './errors';
import { isFinalOutcome, type OutcomeRule } from './outcome';
import { MAX_TIMER_MS } from './milliseconds';

/**
 * How one operation is protected. Every field has a default; an operation
 * overrides only what it must.
 *
 * @public
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
   * in milliseconds, shorter than the lease; `0` turns it off. Default a
   * third of the lease, so two renewals can fail before the lease runs out.
   */
  heartbeatMs: number;
  /** `wait` for the running execution (default) or answer 409 at once. */
  inFlight: 'wait' | 'reject';
  /** Longest a duplicate waits, whatever deadline its caller sent. Default 30 s. */
  maxWaitMs: number;
  /**
   * How many duplicates of one key may wait in this process at once; the
   * next one is answered 409 with `Retry-After`, as under `reject`. However
   * many wait, a store watches the key once, but each holds a request (a
   * socket, its memory) and claims again when woken: a client retrying in
   * a loop must not pile them up. Default 1,000. See also the coordinator's
   * `maxWaiters`.
   */
  maxWaitersPerKey: number;
  /**
   * `fail-closed` (default): a request whose key cannot be claimed because
   * the store is unreachable is refused (503) and not executed. `fail-open`:
   * it runs unprotected, and is counted. Either way, a request that has seen
   * its key held by another execution never runs unprotected next to it, and
   * a store that answers but refuses (`SchemaVersionError`,
   * `StoreRefusedError`) is not unreachable: its requests are refused (500).
   */
  onStoreFailure: 'fail-closed' | 'fail-open';
  /** Which results are stored; the others release the key. */
  isFinal: OutcomeRule;
  /**
   * Run the action inside a store transaction and complete the record in
   * that same transaction (stores that implement `TransactionalStore`, e.g.
   * `PostgresStore`): the action finds it as `Execution.transaction` and
   * writes its side effect through it, so the side effect and the
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
  maxWaitersPerKey: 1_000,
  onStoreFailure: 'fail-closed',
  isFinal: isFinalOutcome,
});

/**
 * Merge policy layers, later ones winning, and check the result; a field
 * present but `undefined` is ignored, so it never erases a default. A lease
 * given without a heartbeat in the same or a later layer gets the default
 * heartbeat ratio, so a shorter lease is never outlived by its renewal
 * interval; a heartbeat of `0` (off) holds whatever lease comes after it.
 * Check the result with {@link validatePolicy}.
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

/**
 * Refuse a policy that breaks the guarantees: a lease that is not a
 * positive time (every claim would expire at once), a heartbeat as long as
 * the lease (the lease runs out between two renewals, and a duplicate takes
 * the key from a live holder), a negative wait or retention, a cap on
 * waiters that is not a whole number from 1, an unknown policy word. Called at boot for every operation and route, so a bad value
 * stops the service instead of charging twice.
 *
 * @param where Names the policy in the message, e.g. `operation payments.charge`.
 */
export function validatePolicy(policy: OperationPolicy, where: string): OperationPolicy {
  const fail = (message: string): never => {
    throw new InvalidPolicyError(`${where}: ${message}`);
  };
  // Leases, heartbeats and waits become timers; retention only a store TTL.
  const ms = (name: 'leaseMs' | 'retentionMs' | 'maxWaitMs' | 'heartbeatMs', min: number, max: number) => {
    const value = policy[name];
    if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max) {
      fail(`${name} must be a number of milliseconds from ${min} to ${max} (got ${String(value)})`);
    }
  };
  ms('leaseMs', 1, MAX_TIMER_MS);
  ms('retentionMs', 1, Number.MAX_SAFE_INTEGER);
  ms('maxWaitMs', 0, MAX_TIMER_MS);
  ms('heartbeatMs', 0, MAX_TIMER_MS);
  if (policy.heartbeatMs !== 0 && policy.heartbeatMs >= policy.leaseMs) {
    fail(`heartbeatMs (${policy.heartbeatMs}) must be shorter than leaseMs (${policy.leaseMs}), or 0 to turn the heartbeat off`);
  }
  if (!isCount(policy.maxWaitersPerKey)) {
    fail(
      `maxWaitersPerKey must be a whole number from 1 (got ${String(policy.maxWaitersPerKey)}); inFlight: 'reject' refuses every duplicate`,
    );
  }
  if (policy.inFlight !== 'wait' && policy.inFlight !== 'reject')
    fail(`inFlight must be 'wait' or 'reject' (got ${String(policy.inFlight)})`);
  if (policy.onStoreFailure !== 'fail-closed' && policy.onStoreFailure !== 'fail-open') {
    fail(`onStoreFailure must be 'fail-closed' or 'fail-open' (got ${String(policy.onStoreFailure)})`);
  }
  if (typeof policy.isFinal !== 'function') fail('isFinal must be a function');
  if (policy.transactional !== undefined && typeof policy.transactional !== 'boolean') fail('transactional must be a boolean');
  return policy;
}

/** Whether `value` is a usable cap: a whole number from 1. */
export function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 1;
}
