import { createHash, randomUUID } from 'node:crypto';
import { InFlightError, KeyReusedError, LeaseLostError, StoreUnavailableError } from './errors';
import { hashKey } from './fingerprint';
import { IdempotencyOutcome, type IdempotencyObserver } from './observer';
import { resolvePolicy, type OperationPolicy } from './policy';
import { isTransactionalStore, type ClaimResult, type IdempotencyStore, type StoreTransaction, type TransactionalStore } from './store';

/** How a coordinator is set up, once per service. */
export interface IdempotencyOptions {
  /** This service's name: part of every record's identity. */
  service: string;
  store: IdempotencyStore;
  /** Policy for every operation of this service. */
  defaults?: Partial<OperationPolicy>;
  /** Per-operation policy, over the defaults. */
  operations?: Record<string, Partial<OperationPolicy>>;
  observer?: IdempotencyObserver;
}

/** One request to protect. */
export interface RunRequest {
  /** What the request does, e.g. `payments.charge`. */
  operation: string;
  /** The validated idempotency key (or the fingerprint, under the fallback). */
  key: string;
  /** The caller's principal or tenant, so callers never share records. */
  scope?: string;
  /** See `requestFingerprint`. */
  fingerprint: string;
  /** When the caller stops waiting (epoch ms); bounds a duplicate's wait. */
  deadline?: number;
  /** Aborts this request's wait (the caller went away); never the execution. */
  signal?: AbortSignal;
  /** Route-level policy, over the operation's. */
  policy?: Partial<OperationPolicy>;
}

/** What the action is handed when this request executes. */
export interface ExecutionContext {
  /**
   * Fencing epoch of this execution: greater than every earlier one for this
   * key. The protected resource refuses a write carrying an older epoch than
   * one it has seen, which is what stops a holder that lost its lease.
   * `0` when running unprotected under fail-open.
   */
  epoch: number;
  /** Aborted when the heartbeat finds that another owner took the key. */
  signal: AbortSignal;
  /** Hash of the key, for logs. */
  keyHash: string;
  /**
   * The record's identity in the store (a hash of service, operation, scope
   * and key): what a protected resource keys its fence on.
   */
  recordKey: string;
  /**
   * The store's open transaction, when the operation's policy sets
   * `transactional: true` (and the store is a `TransactionalStore`, e.g.
   * `PostgresStore`, whose transaction is a `pg` `PoolClient`). Write the side
   * effect through it: the record's completion commits in the same
   * transaction, so either both are kept or neither is. `undefined`
   * otherwise, including under fail-open.
   *
   * @example
   * // PostgresStore, operation policy { transactional: true }
   * await idempotency.run(request, async ({ transaction }) => {
   *   const tx = transaction as PoolClient; // or postgresTransaction(context) from ./postgres
   *   const { rows } = await tx.query(
   *     'INSERT INTO ledger (order_id, amount_cents) VALUES ($1, $2) RETURNING id', [orderId, amountCents]);
   *   return { statusCode: 201, body: { chargeId: rows[0].id } };
   * }); // ledger row and completed record: one COMMIT
   */
  transaction?: unknown;
}

/** The answer to a protected request. */
export interface RunResult<T> {
  value: T;
  /** True when the value came from the store instead of this execution. */
  replayed: boolean;
  /** True when this request waited for another execution first. */
  waited: boolean;
  /** The epoch this request executed under, when it executed. */
  epoch?: number;
}

/**
 * Runs an action at most once per `(service, operation, scope, key)`.
 *
 * ```text
 *  request A: claim ──► claimed(epoch 7) ──► action ──► complete ──► 201
 *                           │ heartbeat renews the lease while the action runs
 *  request B:   claim ──► in_progress ──► wait ─────────(woken)──► claim ──► completed ──► replay 201
 *  request C:   claim ──► in_progress, other fingerprint ──► 422
 * ```
 *
 * The claim comes before the side effect and is atomic in the store; the
 * result is stored only when final (see `isFinalOutcome`), otherwise the key
 * is released so the next retry runs normally.
 *
 * @example
 * const idempotency = new IdempotencyCoordinator({ service: 'payments', store: new MemoryStore() });
 * const { value, replayed } = await idempotency.run(
 *   { operation: 'payments.charge', key, fingerprint },
 *   ({ epoch }) => ledger.charge(order, epoch),
 * );
 */
export class IdempotencyCoordinator {
  constructor(private readonly options: IdempotencyOptions) {}

  /** The store key of a record: a hash, so no user text reaches the store. */
  storeKey(operation: string, scope: string, key: string): string {
    const identity = JSON.stringify([this.options.service, operation, scope, key]);
    return createHash('sha256').update(identity).digest('hex');
  }

  /** The policy `request` runs under. */
  policyFor(operation: string, route?: Partial<OperationPolicy>): OperationPolicy {
    return resolvePolicy(this.options.defaults, this.options.operations?.[operation], route);
  }

  /** Execute `action` once for this request's key, or answer from the store. */
  async run<T>(request: RunRequest, action: (context: ExecutionContext) => Promise<T>): Promise<RunResult<T>> {
    const policy = this.policyFor(request.operation, request.policy);
    if (policy.transactional && !isTransactionalStore(this.options.store)) {
      throw new TypeError(`Operation ${request.operation} is transactional, but its store has no transactional completion`);
    }
    const storeKey = this.storeKey(request.operation, request.scope ?? '', request.key);
    const keyHash = hashKey(request.key);
    const report = (outcome: IdempotencyOutcome, extra: { epoch?: number; error?: unknown } = {}) =>
      this.options.observer?.record({
        outcome, service: this.options.service, operation: request.operation, keyHash, ...extra,
      });
    const waitUntil = Math.min(Date.now() + policy.maxWaitMs, request.deadline ?? Infinity);
    let waited = false;

    for (;;) {
      const owner = randomUUID();
      let claim: ClaimResult;
      try {
        const started = performance.now();
        claim = await this.options.store.claim({ storeKey, fingerprint: request.fingerprint, owner, leaseMs: policy.leaseMs });
        this.options.observer?.claimLatency?.(this.options.service, request.operation, performance.now() - started);
      } catch (error) {
        report(IdempotencyOutcome.StoreError, { error });
        return this.withoutStore(policy, { keyHash, recordKey: storeKey }, action, error, () => report(IdempotencyOutcome.FailOpen));
      }

      if (claim.status === 'claimed') {
        const execution = new Execution(this.options.store, storeKey, owner, claim.epoch, policy, report);
        const value = await execution.run((transaction) =>
          action({ epoch: claim.epoch, signal: execution.signal, keyHash, recordKey: storeKey, ...(transaction && { transaction: transaction.handle }) }),
        );
        return { value, replayed: false, waited, epoch: claim.epoch };
      }
      if (claim.fingerprint !== request.fingerprint) {
        report(IdempotencyOutcome.Mismatched);
        throw new KeyReusedError('This Idempotency-Key was already used with a different request');
      }
      if (claim.status === 'completed') {
        report(waited ? IdempotencyOutcome.Waited : IdempotencyOutcome.Replayed);
        return { value: JSON.parse(claim.result) as T, replayed: true, waited };
      }

      const retryAfterSeconds = Math.max(1, Math.ceil(claim.leaseRemainingMs / 1000));
      const remaining = waitUntil - Date.now();
      if (policy.inFlight === 'reject' || remaining <= 0) {
        report(IdempotencyOutcome.RejectedInFlight);
        throw new InFlightError('A request with this Idempotency-Key is still being processed', retryAfterSeconds);
      }
      // Wake on the completion signal; the lease bound re-checks a holder that died silently.
      try {
        await this.options.store.waitForChange(storeKey, Math.min(remaining, claim.leaseRemainingMs + 5), request.signal);
      } catch (error) {
        report(IdempotencyOutcome.StoreError, { error });
        return this.withoutStore(policy, { keyHash, recordKey: storeKey }, action, error, () => report(IdempotencyOutcome.FailOpen));
      }
      request.signal?.throwIfAborted();
      waited = true;
    }
  }

  private async withoutStore<T>(
    policy: OperationPolicy,
    identity: { keyHash: string; recordKey: string },
    action: (context: ExecutionContext) => Promise<T>,
    cause: unknown,
    reportFailOpen: () => void,
  ): Promise<RunResult<T>> {
    if (policy.onStoreFailure !== 'fail-open') {
      throw new StoreUnavailableError('The idempotency store is unavailable; the request was not executed', { cause });
    }
    reportFailOpen();
    const value = await action({ epoch: 0, signal: new AbortController().signal, ...identity });
    return { value, replayed: false, waited: false };
  }
}

/** One claimed execution: runs the action under a heartbeat, then stores or releases. */
class Execution {
  private readonly lease = new AbortController();

  constructor(
    private readonly store: IdempotencyStore,
    private readonly storeKey: string,
    private readonly owner: string,
    private readonly epoch: number,
    private readonly policy: OperationPolicy,
    private readonly report: (outcome: IdempotencyOutcome, extra?: { epoch?: number; error?: unknown }) => void,
  ) {}

  get signal(): AbortSignal {
    return this.lease.signal;
  }

  async run<T>(action: (transaction?: StoreTransaction) => Promise<T>): Promise<T> {
    if (this.policy.transactional) return this.runInTransaction(action, this.store as TransactionalStore);
    const stopHeartbeat = this.startHeartbeat();
    let value: T;
    try {
      value = await action();
    } catch (error) {
      stopHeartbeat();
      await this.release();
      throw error;
    }
    stopHeartbeat();
    if (!this.policy.isFinal(value)) {
      await this.release();
      return value;
    }
    // JSON has no `undefined`: store a void result as null, or its replay could not be parsed.
    await this.complete(JSON.stringify(value ?? null));
    return value;
  }

  /**
   * The action and the completion in one store transaction:
   *
   * ```text
   *  claim (own statement, committed) ── BEGIN ── action: side effect ── complete CAS ── COMMIT
   *                                                 │ throws / not final ──► ROLLBACK, release
   *                                                 └ CAS fails (lease lost) ──► ROLLBACK, LeaseLostError
   * ```
   * A crash anywhere before COMMIT leaves neither the side effect nor the
   * completion; the claim frees itself after one lease and the retry executes.
   */
  private async runInTransaction<T>(action: (transaction: StoreTransaction) => Promise<T>, store: TransactionalStore): Promise<T> {
    let transaction: StoreTransaction;
    try {
      transaction = await store.begin(this.storeKey, this.owner);
    } catch (error) {
      this.report(IdempotencyOutcome.StoreError, { epoch: this.epoch, error });
      await this.release();
      throw new StoreUnavailableError('The idempotency store could not open a transaction; the request was not executed', { cause: error });
    }
    const stopHeartbeat = this.startHeartbeat();
    let value: T;
    try {
      value = await action(transaction);
    } catch (error) {
      stopHeartbeat();
      await transaction.rollback();
      await this.release();
      throw error;
    }
    stopHeartbeat();
    if (!this.policy.isFinal(value)) {
      // The key is released for a retry, so the side effect must not stay behind.
      await transaction.rollback();
      await this.release();
      return value;
    }
    let stored: boolean;
    try {
      stored = await transaction.complete(JSON.stringify(value ?? null), this.policy.retentionMs);
    } catch (error) {
      // Unknown outcome, but never half of one: side effect and completion are
      // both committed (a retry replays) or both gone (the lease frees the key).
      this.report(IdempotencyOutcome.StoreError, { epoch: this.epoch, error });
      throw new StoreUnavailableError('The idempotency store failed while committing; retry the request', { cause: error });
    }
    if (!stored) {
      this.report(IdempotencyOutcome.StaleCompletionRefused, { epoch: this.epoch });
      throw new LeaseLostError('This execution lost its lease; its side effect was rolled back');
    }
    this.report(IdempotencyOutcome.Executed, { epoch: this.epoch });
    return value;
  }

  private async complete(result: string): Promise<void> {
    let stored: boolean;
    try {
      stored = await this.store.complete(this.storeKey, this.owner, result, this.policy.retentionMs);
    } catch (error) {
      // The side effect happened: the caller still gets its answer. The record
      // stays in progress until its lease ends; a retry after that re-executes
      // and must be stopped by the fence at the protected resource.
      this.report(IdempotencyOutcome.StoreError, { epoch: this.epoch, error });
      return;
    }
    if (!stored) {
      this.report(IdempotencyOutcome.StaleCompletionRefused, { epoch: this.epoch });
      throw new LeaseLostError('This execution lost its lease; the request is now owned by another attempt');
    }
    this.report(IdempotencyOutcome.Executed, { epoch: this.epoch });
  }

  private async release(): Promise<void> {
    try {
      const released = await this.store.release(this.storeKey, this.owner);
      this.report(released ? IdempotencyOutcome.Released : IdempotencyOutcome.StaleCompletionRefused, { epoch: this.epoch });
    } catch (error) {
      // Nothing to undo: the record will expire with its lease.
      this.report(IdempotencyOutcome.StoreError, { epoch: this.epoch, error });
    }
  }

  /** Renew the lease every `heartbeatMs`; abort the action's signal if it is lost. */
  private startHeartbeat(): () => void {
    if (this.policy.heartbeatMs <= 0) return () => undefined;
    let renewing = false;
    const timer = setInterval(() => {
      if (renewing) return;
      renewing = true;
      this.store
        .renew(this.storeKey, this.owner, this.policy.leaseMs)
        .then((held) => {
          if (held || this.lease.signal.aborted) return;
          clearInterval(timer);
          this.report(IdempotencyOutcome.LeaseLost, { epoch: this.epoch });
          this.lease.abort(new LeaseLostError('Another attempt took over this key'));
        })
        // A failed renewal is not a lost lease: try again on the next beat.
        .catch((error: unknown) => this.report(IdempotencyOutcome.StoreError, { epoch: this.epoch, error }))
        .finally(() => {
          renewing = false;
        });
    }, this.policy.heartbeatMs);
    timer.unref();
    return () => clearInterval(timer);
  }
}
