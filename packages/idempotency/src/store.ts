/**
 * The persistence contract every store implements. The coordinator owns the
 * algorithm (who executes, who waits, what is stored); a store only has to
 * make each of these operations atomic against every other caller, in this
 * process or any other.
 *
 * Records are addressed by `recordKey`, an opaque hash of
 * `(service, operation, scope, key)` computed by the coordinator: no user
 * text ever reaches a store's key space.
 */

/**
 * Status values of a stored record.
 *
 * @public
 */
export const RecordStatus = {
  InProgress: 'in_progress',
  Completed: 'completed',
} as const;
/**
 * One of the {@link RecordStatus} values.
 *
 * @public
 */
export type RecordStatus = (typeof RecordStatus)[keyof typeof RecordStatus];

/**
 * What a claim asks for.
 *
 * @public
 */
export interface ClaimRequest {
  /** Hash of `(service, operation, scope, key)`. */
  recordKey: string;
  /** SHA-256 of the request's canonical form; compared on every later claim. */
  fingerprint: string;
  /** Random token naming this execution; required by complete/release/renew. */
  owner: string;
  /** How long the claim holds without a renewal, in milliseconds. */
  leaseMs: number;
  /**
   * How often the claimer's heartbeat renews the lease, in milliseconds;
   * `0` when it never does. Kept with the record, with the time of its last
   * renewal, so that an operator can tell a holder that is still running
   * from one that went silent (see `HolderState`). A store that is not
   * given it, or cannot keep it, reports the holder alive for as long as
   * its lease lasts.
   */
  heartbeatMs?: number;
}

/**
 * The answer to a claim, decided atomically by the store:
 * - `claimed`: the record was absent, expired, or held by a lease that ran
 *   out; the caller now owns it with a fencing `epoch` strictly greater than
 *   any earlier epoch of this `recordKey`.
 *   A claim that finds the record in progress under its own `owner` (the
 *   same claim arriving twice, resent after a reconnect) answers `claimed`
 *   with the record's epoch again, never `in_progress`.
 * - `in_progress`: another owner holds a live lease.
 * - `completed`: a result is stored; it is returned as it was stored,
 *   with how long the store still keeps it when the store can tell.
 *
 * @public
 */
export type ClaimResult =
  | { status: 'claimed'; epoch: number }
  | { status: 'in_progress'; fingerprint: string; leaseRemainingMs: number }
  | { status: 'completed'; fingerprint: string; result: string; remainingMs?: number };

/**
 * A store of idempotency records.
 *
 * Every method is one atomic step (one Lua script in Redis, one synchronous
 * block in memory). `complete`, `release` and `renew` are compare-and-set on
 * the owner token: they return `false`, and change nothing, when `owner` no
 * longer holds the record (its lease ran out and someone else claimed it).
 * Any method may reject when the store cannot be reached; the coordinator
 * turns that into its fail-closed or fail-open answer. A store that answers
 * but refuses (its schema behind, its credentials or grants wrong) rejects
 * with `SchemaVersionError` or `StoreRefusedError` instead, which the
 * coordinator never fails open on.
 *
 * Every method is idempotent for its own owner: the same call arriving
 * twice (a client that resends a command after a reconnect, a caller that
 * retries one whose reply was lost) answers as the first did, so a store
 * keeps a record's `owner` after it completes (and, for a release, for as
 * long as the released lease would have lasted):
 *
 * | call, sent again by the same owner                  | answers                                 |
 * |-----------------------------------------------------|-----------------------------------------|
 * | `claim`, record in progress under it                | `claimed` with the same epoch           |
 * | `complete`, record completed by it                  | `true`; the first result is kept        |
 * | `renew`, record in progress or completed by it      | `true`; a completed record is unchanged |
 * | `release`, record released by it, not claimed since | `true`                                  |
 *
 * @public
 */
export interface IdempotencyStore {
  /** Create the record, take over an expired lease, or report what is there. */
  claim(request: ClaimRequest): Promise<ClaimResult>;

  /**
   * Store the final result (serialised by the coordinator) and keep it for
   * `retentionMs`, then wake every waiter on `recordKey`. `true` means the
   * result is stored (by this call or an earlier one of the same owner):
   * the caller may tell "stored" from "sent" by it alone.
   */
  complete(recordKey: string, owner: string, result: string, retentionMs: number): Promise<boolean>;

  /** Delete the in-progress record so the next attempt executes; wake waiters. */
  release(recordKey: string, owner: string): Promise<boolean>;

  /** Extend a live lease by `leaseMs` from now. */
  renew(recordKey: string, owner: string, leaseMs: number): Promise<boolean>;

  /**
   * Resolve when the record at `recordKey` may have left `in_progress`
   * (completed, released, expired), or after `timeoutMs`, or when `signal`
   * aborts - whichever comes first. It never rejects on timeout or abort: the
   * caller claims again to learn what happened. Woken by a completion signal
   * (a shared promise, pub/sub); a store may poll as a safety net only.
   */
  waitForChange(recordKey: string, timeoutMs: number, signal?: AbortSignal): Promise<void>;

  /** Release connections and timers. */
  close(): Promise<void>;

  /**
   * Open the store's connection, if it has one that is not open yet (a
   * Redis client created with `lazyConnect`), and prepare what it needs (a
   * schema, when asked to). Safe to call on a connected store.
   * `IdempotencyModule` calls it at boot, so a service that forgets to
   * connect its client does not answer every request 503.
   */
  connect?(): Promise<void>;

  /**
   * Resolve when the store answers a round trip, reject when it does not:
   * what a health check asks. Resolves with {@link StoreDegraded} when it
   * serves some records but not all (a Redis Cluster with a shard down).
   */
  ping?(): Promise<void | StoreDegraded>;

  /**
   * What the store's records keep of a request's `fingerprint`, when that is
   * less than the fingerprint itself: `RedisStore` keeps the first 128 bits
   * of its SHA-256 (32 hex digits). A store that keeps the whole fingerprint
   * leaves it out.
   * An encrypted answer is bound to this, the fingerprint its record
   * carries, so `inspectRecord` opens it from the record alone. Whatever
   * the store keeps, a claim must answer a record of the same request with
   * the request's own `fingerprint`, and a record of another request with a
   * fingerprint that differs from it.
   */
  keptFingerprint?(fingerprint: string): string;
}

/**
 * What `ping()` resolves with for a store that serves some records but not
 * all: a Redis Cluster, under `cluster-require-full-coverage no`, with a
 * shard down. Its other records are served, so a pod stays ready; a
 * request whose record lives on the missing part fails as in an outage.
 *
 * @public
 */
export interface StoreDegraded {
  /** What does not answer, for the operators. */
  degraded: string;
}

/**
 * One open store transaction that an execution's side effect joins, so the
 * side effect and the record's completion commit together or not at all.
 * Made by {@link TransactionalStore.begin}; the coordinator ends it exactly
 * once, with `complete` or `rollback`.
 *
 * @public
 */
export interface StoreTransaction<Tx = unknown> {
  /** What the action writes its side effect through (for `PostgresStore`, a `pg` `PoolClient`). */
  readonly handle: Tx;
  /**
   * Complete the record inside this transaction - the same owner
   * compare-and-set as `IdempotencyStore.complete` - then commit. When the
   * owner no longer holds the record, roll everything back (the side effect
   * too) and resolve `false`. Rejects when the outcome is unknown (the
   * connection died before the commit was acknowledged): then the side effect
   * and the completion are either both committed or both absent.
   */
  complete(result: string, retentionMs: number): Promise<boolean>;
  /** Undo everything the transaction did. Never rejects; a dead connection rolls back by itself. */
  rollback(): Promise<void>;
}

/**
 * A store that can open a transaction the action's side effect shares with
 * the record's completion (`PostgresStore`). Used for operations whose policy
 * sets `transactional: true`.
 *
 * @public
 */
export interface TransactionalStore<Tx = unknown> extends IdempotencyStore {
  /** Open a transaction for the execution `owner` holds on `recordKey`. */
  begin(recordKey: string, owner: string): Promise<StoreTransaction<Tx>>;
}

/** Whether `store` offers transactional completion. */
export function isTransactionalStore(store: IdempotencyStore): store is TransactionalStore {
  return typeof (store as Partial<TransactionalStore>).begin === 'function';
}

/**
 * A record as an operator sees it, read in one atomic step by
 * {@link InspectableStore.inspect}. Never the owner token itself: only
 * whether one is there.
 *
 * @beta
 */
export interface StoredRecord {
  /** In progress (held by a lease) or completed (an answer stored). */
  status: RecordStatus;
  /** The fencing epoch the record was claimed under. */
  epoch: number;
  /** Whether the record names an owner (an in-progress record always does; a completed one keeps its completer's). */
  ownerPresent: boolean;
  /** Lease left while in progress, retention left once completed, in milliseconds; `undefined` when the store cannot tell. */
  remainingMs?: number;
  /** The request fingerprint the record was claimed for, as the store keeps it (see `IdempotencyStore.keptFingerprint`). */
  fingerprint: string;
  /**
   * In progress: how long ago, by the store's clock, the holder last
   * renewed its lease (or claimed it, when it has not renewed yet), in
   * milliseconds; `undefined` when the record does not keep it (written by
   * an earlier release).
   */
  lastRenewalMsAgo?: number;
  /** In progress: the holder's heartbeat interval, as its claim gave it (`0`: no heartbeat); `undefined` when the record does not keep it. */
  heartbeatMs?: number;
  /** The stored answer as the store keeps it (maybe encrypted), once completed. */
  result?: string;
}

/**
 * What {@link InspectableStore.releaseByOperator} did, decided atomically by
 * the store:
 * - `released`: the record was in progress and its holder silent (see
 *   `HolderState`); its owner no longer holds it (its `complete`, `renew`
 *   and `release` answer `false`) and every later claim gets an epoch
 *   greater than `epochAfter`.
 * - `forced`: the record was completed and `force` was set: its stored
 *   answer is deleted, so the next request with this key executes again.
 * - `forced_holder_alive`: the record was in progress, its holder alive,
 *   and `force` was set: released as above, while the holder's execution
 *   may still run its side effect, which a retry then runs again.
 * - `refused_completed`: the record is completed and `force` was not set:
 *   nothing changed.
 * - `refused_holder_alive`: the record is in progress, its holder alive
 *   (see `HolderState`), and `force` was not set: nothing changed. Ending it
 *   would let a retry run the side effect the holder is still running.
 * - `absent`: no live record (never claimed, released, or its lease or
 *   retention ran out): nothing changed.
 *
 * @beta
 */
export type OperatorReleaseResult =
  | { outcome: 'released' | 'forced' | 'forced_holder_alive'; epochBefore: number; epochAfter: number }
  | { outcome: 'refused_completed'; epochBefore: number }
  | { outcome: 'refused_holder_alive'; epochBefore: number; lastRenewalMsAgo?: number }
  | { outcome: 'absent' };

/**
 * A store an operator can look into and release records of, for when a
 * key is held by a holder that is gone, or a customer asks whether a
 * request ran. Both methods are one atomic step, like the rest of the
 * store, and both bypass nothing: a release moves the fence forward
 * instead of deleting around it. Every store of this package implements
 * it; `inspectRecord` and `releaseRecord` are the API to call.
 *
 * @beta
 */
export interface InspectableStore extends IdempotencyStore {
  /** The live record at `recordKey`, or `undefined` when there is none. */
  inspect(recordKey: string): Promise<StoredRecord | undefined>;
  /**
   * End the record at `recordKey` whoever holds it: take the ownership of
   * an in-progress record whose holder is silent away and move its epoch
   * forward; with `force`, that of a holder still alive too, or delete a
   * completed record's answer; wake its waiters. Whether the holder is
   * alive is decided in the same atomic step, by `holderState`.
   */
  releaseByOperator(recordKey: string, options: { force: boolean }): Promise<OperatorReleaseResult>;
}

/** Whether `store` offers operator inspection and release. */
export function isInspectableStore(store: IdempotencyStore): store is InspectableStore {
  const candidate = store as Partial<InspectableStore>;
  return typeof candidate.inspect === 'function' && typeof candidate.releaseByOperator === 'function';
}
