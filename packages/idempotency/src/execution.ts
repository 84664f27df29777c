import { LeaseLostError, StoreUnavailableError } from './errors';
import { heartbeat, type Beating } from './heartbeat';
import { IdempotencyOutcome } from './observer';
import type { OperationPolicy } from './policy';
import type { RunningExecutions } from './running-executions';
import type { IdempotencyStore, StoreTransaction } from './store';

/** Reports one of the execution's decisions (see `IdempotencyObserver`). */
export type ExecutionReport = (outcome: IdempotencyOutcome, extra?: { epoch?: number; error?: unknown }) => void;

/**
 * One execution of an operation for one key: what the action is handed
 * (`epoch`, `signal`, `recordKey`, `transaction`), and what ends it
 * (`complete` or `release`, exactly once, called by the coordinator or an
 * integration - never by the action).
 *
 * From the claim to its end a heartbeat renews the lease at least every
 * `heartbeatMs`; a renewal that finds another owner aborts `signal`. Under
 * fail-open the execution is unprotected: epoch 0, nothing to complete.
 *
 * ```text
 *  claim ── heartbeat ── heartbeat ── ... ── complete(result) ─► stored, waiters woken
 *                                        └── release() ─────────► key free for a retry
 * ```
 */
export class Execution implements Beating {
  private lease: AbortController | undefined;
  /** @internal When the last renewal started (see `heartbeat`). */
  lastBeatAt = 0;
  private renewing = false;
  /** `complete` or `release` was called. */
  private ended = false;
  /** A renewal found another owner: the heartbeat stopped. */
  private lost = false;

  /** @internal Made by `IdempotencyCoordinator.begin`. */
  constructor(
    private readonly store: IdempotencyStore,
    /**
     * The record's identity in the store (a hash of service, operation,
     * scope and key): what a protected resource keys its fence on.
     */
    readonly recordKey: string,
    private readonly owner: string,
    /**
     * Fencing epoch: greater than every earlier one for this key. The
     * protected resource refuses a write carrying an older epoch than one it
     * has seen, which is what stops a holder that lost its lease. `0` when
     * running unprotected under fail-open.
     */
    readonly epoch: number,
    private readonly policy: OperationPolicy,
    private readonly report: ExecutionReport,
    /**
     * The store's open transaction under `transactional: true` (for
     * `PostgresStore`, a `pg` `PoolClient`): write the side effect through it
     * and it commits with the record's completion, or not at all.
     */
    private readonly storeTransaction?: StoreTransaction,
    /**
     * Where this execution is counted until its answer is stored or its key
     * given back (see `IdempotencyCoordinator.drain`): the coordinator
     * counted its claim, and the execution takes that count over.
     */
    private readonly running?: RunningExecutions,
  ) {
    if (epoch > 0) this.startHeartbeat();
  }

  /** The store transaction's handle, when the operation is transactional; `undefined` otherwise. */
  get transaction(): unknown {
    return this.storeTransaction?.handle;
  }

  /** Aborted when the heartbeat finds that another execution took the key over. */
  get signal(): AbortSignal {
    this.lease ??= new AbortController();
    return this.lease.signal;
  }

  /** False under fail-open: nothing is claimed, stored or released. */
  get protected(): boolean {
    return this.epoch > 0;
  }

  /**
   * Store the final `result` (kept for the retention) and wake every waiter.
   * Under `transactional`, the completion commits with the side effect.
   * `unstorable` says the action's own result could not be stored (not
   * serialisable, too large): `result` is the error answer stored in its
   * place, so a retry never runs the action again; it is reported as such.
   *
   * @throws LeaseLostError when another execution took the key over: the
   *   result was not stored (and, in a transaction, the side effect rolled back).
   * @throws StoreUnavailableError when a transaction's commit had an unknown
   *   outcome. A store error outside a transaction is reported, not thrown:
   *   the side effect happened and the caller still gets its answer.
   */
  async complete(result: string, unstorable?: unknown): Promise<void> {
    if (!this.end()) return;
    try {
      if (unstorable !== undefined) this.report(IdempotencyOutcome.Unstorable, { epoch: this.epoch, error: unstorable });
      let stored: boolean;
      try {
        stored = this.storeTransaction
          ? await this.storeTransaction.complete(result, this.policy.retentionMs)
          : await this.store.complete(this.recordKey, this.owner, result, this.policy.retentionMs);
      } catch (error) {
        this.report(IdempotencyOutcome.StoreError, { epoch: this.epoch, error });
        if (!this.storeTransaction) return; // in progress until its lease ends; the fence stops a re-execution
        // Unknown outcome, but never half of one: side effect and completion
        // are both committed (a retry replays) or both gone (the lease frees the key).
        throw new StoreUnavailableError('The idempotency store failed while committing; retry the request', { cause: error });
      }
      if (!stored) {
        this.report(IdempotencyOutcome.StaleCompletionRefused, { epoch: this.epoch });
        throw new LeaseLostError(
          this.storeTransaction
            ? 'This execution lost its lease; its side effect was rolled back'
            : 'This execution lost its lease; the request is now owned by another attempt',
        );
      }
      this.report(IdempotencyOutcome.Executed, { epoch: this.epoch });
    } finally {
      this.running?.ended();
    }
  }

  /**
   * Give the key back so the next attempt executes (a transient failure),
   * and wake every waiter; a transaction is rolled back first. Never throws:
   * a release that fails leaves the record to expire with its lease.
   */
  async release(): Promise<void> {
    if (!this.end()) return;
    try {
      await this.storeTransaction?.rollback();
      const released = await this.store.release(this.recordKey, this.owner);
      this.report(released ? IdempotencyOutcome.Released : IdempotencyOutcome.StaleCompletionRefused, { epoch: this.epoch });
    } catch (error) {
      this.report(IdempotencyOutcome.StoreError, { epoch: this.epoch, error });
    } finally {
      this.running?.ended();
    }
  }

  /** Stop the heartbeat; true the first time, when there is something to end. */
  private end(): boolean {
    if (this.ended) return false;
    this.ended = true;
    if (this.policy.heartbeatMs > 0) heartbeat(this.policy.heartbeatMs).delete(this);
    return this.protected;
  }

  /** Renew the lease every `heartbeatMs` until the execution ends (see `heartbeat`). */
  private startHeartbeat(): void {
    if (this.policy.heartbeatMs <= 0) return;
    this.lastBeatAt = performance.now();
    heartbeat(this.policy.heartbeatMs).add(this);
  }

  /** @internal One renewal of the lease, started by the heartbeat. */
  beat(): void {
    if (this.ended || this.lost || this.renewing) return;
    this.renewing = true;
    this.lastBeatAt = performance.now();
    this.store
      .renew(this.recordKey, this.owner, this.policy.leaseMs)
      .then((held) => {
        // A renewal that lands after the end (its completion travelled on
        // another connection) is not a lost lease.
        if (held || this.ended) return;
        this.lost = true;
        heartbeat(this.policy.heartbeatMs).delete(this);
        this.report(IdempotencyOutcome.LeaseLost, { epoch: this.epoch });
        this.lease ??= new AbortController();
        this.lease.abort(new LeaseLostError('Another attempt took over this key'));
      })
      // A failed renewal is not a lost lease: try again on the next beat.
      .catch((error: unknown) => this.report(IdempotencyOutcome.StoreError, { epoch: this.epoch, error }))
      .finally(() => {
        this.renewing = false;
      });
  }
}
