import { LeaseLostError, StoreUnavailableError } from './errors';
import { heartbeat, type Beating } from './heartbeat';
import type { Membership } from './member-list';
import { IdempotencyOutcome } from './observer';
import { isFinalOutcome } from './outcome';
import type { OperationPolicy } from './policy';
import type { RunningExecutions } from './running-executions';
import type { IdempotencyStore, StoreTransaction } from './store';

/** Reports one of the execution's decisions (see `IdempotencyObserver`). */
export type ExecutionReport = (outcome: IdempotencyOutcome, extra?: { epoch?: number; error?: unknown }) => void;

/** @internal What one execution is made of: its claim, its policy, and what it reports and stores through. */
export interface ExecutionParts {
  store: IdempotencyStore;
  /** See `Execution.recordKey`. */
  recordKey: string;
  /** The claim's owner token: what the store's compare-and-set checks. */
  owner: string;
  /** See `Execution.epoch`; `0` under fail-open, when nothing was claimed. */
  epoch: number;
  policy: OperationPolicy;
  report: ExecutionReport;
  /**
   * The store's open transaction under `transactional: true` (for
   * `PostgresStore`, a `pg` `PoolClient`): write the side effect through it
   * and it commits with the record's completion, or not at all.
   */
  transaction?: StoreTransaction;
  /**
   * Where this execution is counted until its answer is stored or its key
   * given back (see `IdempotencyCoordinator.drain`): the coordinator
   * counted its claim, and the execution takes that count over.
   */
  running?: RunningExecutions;
  /**
   * Keeps a result that could not be stored in this process (the
   * coordinator's replay cache), so a retry that reaches it replays.
   */
  remember?: (result: string) => void;
  /**
   * The result as the store keeps it: encrypted for this record and this
   * request's fingerprint, when the coordinator encrypts answers.
   */
  seal?: (result: string) => string;
}

/** The first pause between two completion attempts; it doubles up to {@link RETRY_MAX_MS}. */
const RETRY_FIRST_MS = 50;
/** The longest pause between two completion attempts: a store back from a restart is found within it. */
const RETRY_MAX_MS = 1_000;

/**
 * How a completion ended in the store; `held` when the caller's share of
 * the retries ran out while the lease is still held, and they go on
 * without the caller.
 */
type Stored = 'stored' | 'refused' | 'lost' | 'failed' | 'held';

/**
 * One execution of an operation for one key: what the action is handed
 * (`epoch`, `signal`, `recordKey`, `transaction`), and what ends it
 * (`complete` or `release`, exactly once, called by the coordinator or an
 * integration - never by the action).
 *
 * From the claim until its result is stored a heartbeat renews the lease
 * at least every `heartbeatMs`; a renewal that finds another owner aborts
 * `signal`. Under fail-open the execution is unprotected: epoch 0, nothing
 * to complete.
 *
 * ```text
 *  claim ── heartbeat ── heartbeat ── ... ── complete(result) ─(retried, heartbeat on)─► stored, waiters woken
 *                                        └── release() ─────────► key free for a retry
 * ```
 *
 * @public
 */
export class Execution implements Beating {
  private lease: AbortController | undefined;
  /** Its place in the heartbeat, from the claim until the store has the last word (or the lease is lost). */
  private beating: Membership<Beating> | undefined;
  /** @internal When the last renewal started (see `heartbeat`). */
  lastBeatAt = 0;
  private renewing = false;
  /** `complete` or `release` was called. */
  private ended = false;
  /** A renewal found another owner: the heartbeat stopped. */
  private lost = false;
  /** The store answered the end (or gave up): the heartbeat stopped. */
  private settled = false;
  /**
   * `performance.now()` until which the lease is held: one lease from the
   * claim's answer, or from the start of the last renewal the store
   * acknowledged. Past it a completion can no longer be stored, so its
   * retries stop there.
   */
  private heldUntil: number;

  /**
   * The record's identity in the store (a hash of service, operation,
   * scope and key): what a protected resource keys its fence on.
   */
  readonly recordKey: string;
  /**
   * Fencing epoch: greater than every earlier one for this key. The
   * protected resource refuses a write carrying an older epoch than one it
   * has seen, which is what stops a holder that lost its lease. `0` when
   * running unprotected under fail-open.
   */
  readonly epoch: number;
  private readonly store: IdempotencyStore;
  private readonly owner: string;
  private readonly policy: OperationPolicy;
  private readonly report: ExecutionReport;
  private readonly storeTransaction: StoreTransaction | undefined;
  private readonly running: RunningExecutions | undefined;
  private readonly remember: ((result: string) => void) | undefined;
  private readonly seal: ((result: string) => string) | undefined;

  /** @internal Made by `IdempotencyCoordinator` alone, from its claim (see `ExecutionParts`). */
  constructor(parts: ExecutionParts) {
    this.store = parts.store;
    this.recordKey = parts.recordKey;
    this.owner = parts.owner;
    this.epoch = parts.epoch;
    this.policy = parts.policy;
    this.report = parts.report;
    this.storeTransaction = parts.transaction;
    this.running = parts.running;
    this.remember = parts.remember;
    this.seal = parts.seal;
    this.heldUntil = performance.now() + this.policy.leaseMs;
    if (this.epoch > 0) this.startHeartbeat();
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
   * A store that fails is tried again, with a capped backoff and the
   * heartbeat still renewing the lease, until the result is stored, the
   * lease is lost, or the lease held runs out: a side effect that ran is
   * never run again because one store write failed. The caller waits for
   * at most one `leaseMs` of that; then it gets its answer (the work ran),
   * the answer is kept in this process for the next attempt, and, while
   * the store still renews the lease, the retries go on without the caller
   * for up to the retention, so no other process claims the key meanwhile.
   * When it finally cannot be stored, `completion_failed` is reported.
   *
   * @returns `true` when the result is stored, `false` when it could not be
   *   (or the execution is unprotected, or had ended already).
   * @throws LeaseLostError when another execution took the key over: the
   *   result was not stored (and, in a transaction, the side effect rolled back).
   * @throws StoreUnavailableError when a transaction's commit had an unknown
   *   outcome.
   */
  async complete(result: string, unstorable?: unknown): Promise<boolean> {
    if (!this.end()) return false;
    let goesOn = false;
    try {
      if (unstorable !== undefined) this.report(IdempotencyOutcome.Unstorable, { epoch: this.epoch, error: unstorable });
      // Sealed once: every attempt stores the same bytes, and this process keeps the result as it is.
      const asStored = this.seal ? this.seal(result) : result;
      let stored: Stored;
      if (this.storeTransaction) stored = await this.commit(asStored);
      else {
        // The first attempt awaited here, not in `retry`: a stored result is reported before the waiters it woke.
        try {
          stored = (await this.storeResult(asStored)) ? 'stored' : 'refused';
        } catch (error) {
          stored = await this.retry(asStored, error);
        }
      }
      if (stored === 'refused') this.report(IdempotencyOutcome.StaleCompletionRefused, { epoch: this.epoch });
      if (stored === 'refused' || stored === 'lost') {
        throw new LeaseLostError(
          this.storeTransaction
            ? 'This execution lost its lease; its side effect was rolled back'
            : 'This execution lost its lease; the request is now owned by another attempt',
        );
      }
      if (stored === 'failed' || stored === 'held') {
        this.remember?.(result);
        if (stored === 'held') {
          goesOn = true;
          void this.completeWithoutCaller(asStored);
        } else this.report(IdempotencyOutcome.CompletionFailed, { epoch: this.epoch });
        return false;
      }
      this.report(IdempotencyOutcome.Executed, { epoch: this.epoch });
      return true;
    } finally {
      if (!goesOn) this.settle();
    }
  }

  /**
   * The retries left once the caller has its answer: every `RETRY_MAX_MS`
   * while the heartbeat still holds the lease, for at most the retention
   * (past it a stored result would have expired anyway). The heartbeat and
   * the drain's count end with them.
   */
  private async completeWithoutCaller(result: string): Promise<void> {
    const giveUpAt = performance.now() + this.policy.retentionMs;
    try {
      for (;;) {
        const now = performance.now();
        if (this.lost) return;
        if (now >= Math.min(giveUpAt, this.heldUntil)) {
          this.report(IdempotencyOutcome.CompletionFailed, { epoch: this.epoch });
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, Math.min(RETRY_MAX_MS, this.heldUntil - now)));
        try {
          const stored = await this.storeResult(result);
          this.report(stored ? IdempotencyOutcome.Executed : IdempotencyOutcome.StaleCompletionRefused, { epoch: this.epoch });
          return;
        } catch {
          // Reported once, when the caller's share of the retries ran out; a store down for hours is one alert, not one per second.
        }
      }
    } finally {
      this.settle();
    }
  }

  /**
   * Give the key back so the next attempt executes (a transient failure),
   * and wake every waiter; a transaction is rolled back first. Never throws:
   * a release that fails leaves the record to expire with its lease.
   */
  async release(): Promise<void> {
    if (!this.end()) return;
    this.stopHeartbeat();
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

  /**
   * Whether `result` is final under this execution's policy (`isFinal`). A
   * rule that throws is reported `is_final_threw` with its error, and the
   * built-in rule (`isFinalOutcome`) decides instead: a success or a
   * definitive client error is stored (the action ran: a retry replays it,
   * never runs it again), a 5xx or a not-now status releases the key, as it
   * would have without the app's rule. Either way the key is never left
   * neither stored nor released, held by its heartbeat for good.
   */
  isFinal(result: unknown): boolean {
    try {
      return this.policy.isFinal(result);
    } catch (error) {
      this.report(IdempotencyOutcome.IsFinalThrew, { epoch: this.epoch, error });
      return isFinalOutcome(result);
    }
  }

  /**
   * Complete the record in the store again after `error`, and after each
   * further failure, while the lease can still be held (at most one
   * `leaseMs` from the first failure). Safe to repeat: a completion that
   * landed although its reply was lost answers `true` to the next attempt.
   */
  private async retry(result: string, error: unknown): Promise<Stored> {
    const giveUpAt = performance.now() + this.policy.leaseMs;
    for (let pause = RETRY_FIRST_MS; ; pause = Math.min(pause * 2, RETRY_MAX_MS)) {
      this.report(IdempotencyOutcome.StoreError, { epoch: this.epoch, error });
      if (this.lost) return 'lost';
      const now = performance.now();
      const until = Math.min(giveUpAt, this.heldUntil);
      if (now >= until) return now < this.heldUntil ? 'held' : 'failed';
      await new Promise((resolve) => setTimeout(resolve, Math.min(pause, until - now)));
      try {
        return (await this.storeResult(result)) ? 'stored' : 'refused';
      } catch (next) {
        error = next;
      }
    }
  }

  /** One completion attempt in the store: the store's own promise, so a stored result costs no extra turn. */
  private storeResult(result: string): Promise<boolean> {
    return this.store.complete(this.recordKey, this.owner, result, this.policy.retentionMs);
  }

  /**
   * Complete the record in the action's transaction, once: a commit whose
   * outcome is unknown cannot be repeated, but it is never half of one.
   */
  private async commit(result: string): Promise<Stored> {
    // Its UPDATE holds the record's row until COMMIT: a renewal now would
    // only wait for it, on one of the few connections renewals run on.
    this.stopHeartbeat();
    try {
      return (await (this.storeTransaction as StoreTransaction).complete(result, this.policy.retentionMs)) ? 'stored' : 'refused';
    } catch (error) {
      this.report(IdempotencyOutcome.StoreError, { epoch: this.epoch, error });
      // Side effect and completion are both committed (a retry replays) or
      // both gone (the lease frees the key).
      throw new StoreUnavailableError('The idempotency store failed while committing; retry the request', { cause: error });
    }
  }

  /** True the first time, when there is something to end; the heartbeat goes on until the store answers. */
  private end(): boolean {
    if (this.ended) return false;
    this.ended = true;
    return this.protected;
  }

  /** The store has the last word: stop renewing, and stop counting this execution as running. */
  private settle(): void {
    this.stopHeartbeat();
    this.running?.ended();
  }

  private stopHeartbeat(): void {
    this.settled = true;
    this.beating?.leave();
  }

  /** Renew the lease every `heartbeatMs` until the execution ends (see `heartbeat`). */
  private startHeartbeat(): void {
    if (this.policy.heartbeatMs <= 0) return;
    this.lastBeatAt = performance.now();
    this.beating = heartbeat(this.policy.heartbeatMs).add(this);
  }

  /** @internal One renewal of the lease, started by the heartbeat. */
  beat(): void {
    if (this.settled || this.lost || this.renewing) return;
    this.renewing = true;
    const startedAt = performance.now();
    this.lastBeatAt = startedAt;
    this.store
      .renew(this.recordKey, this.owner, this.policy.leaseMs)
      .then((held) => {
        if (held) this.heldUntil = Math.max(this.heldUntil, startedAt + this.policy.leaseMs);
        // A renewal that lands after the store answered the end (its
        // completion travelled on another connection) is not a lost lease.
        if (held || this.settled) return;
        this.lost = true;
        this.beating?.leave();
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
