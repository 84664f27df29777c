import { randomUUID } from 'node:crypto';
import { AnswerEncryption, openStoredAnswer } from './answer-encryption';
import { runInExecution } from './current-execution';
import { outcomesHeard, publishOutcome, traceClaim } from './diagnostics-channels';
import type { AnswerEncryptionOptions } from './encryption-keys';
import {
  InFlightError,
  InvalidPolicyError,
  isIdempotencyError,
  KeyReusedError,
  RecordVersionError,
  ResultNotStoredError,
  SchemaVersionError,
  StoredAnswerUnreadableError,
  StoreRefusedError,
  StoreUnavailableError,
} from './errors';
import { Execution, type ExecutionReport } from './execution';
import { hashKey } from './key-hash';
import { IdempotencyOutcome, type IdempotencyEvent, type IdempotencyObserver } from './observer';
import { isCount, resolvePolicy, validatePolicy, type OperationPolicy } from './policy';
import { recordKeyOf } from './record-key';
import { readsRoutineKeyHash, ROUTINE_OUTCOMES } from './routine-outcomes';
import { ReplayCache, type ReplayCacheOptions } from './replay-cache';
import { RunningExecutions } from './running-executions';
import { SharedRechecks, type Recheck } from './shared-rechecks';
import { isTransactionalStore, type ClaimResult, type IdempotencyStore, type StoreTransaction } from './store';
import { WaitingRequests } from './waiting-requests';

/**
 * How a coordinator is set up, once per service.
 *
 * @public
 */
export interface IdempotencyOptions {
  /** This service's name: part of every record's identity. */
  service: string;
  store: IdempotencyStore;
  /** Policy for every operation of this service. */
  defaults?: Partial<OperationPolicy>;
  /** Per-operation policy, over the defaults. */
  operations?: Record<string, Partial<OperationPolicy>>;
  observer?: IdempotencyObserver;
  /**
   * Answer the replays of a record this process has already replayed once
   * from memory, without a round trip (see `ReplayCache`); `false` turns it
   * off. Default on: 10,000 records, 16 Mi characters of record keys,
   * fingerprints and results, each replayed from memory for 60 s at most
   * (`maxAgeMs`) before the store is asked again.
   */
  replayCache?: ReplayCacheOptions | false;
  /**
   * How many requests may wait for other executions at once, over every
   * key of this coordinator (in practice: of this service in this
   * process); the next one is answered 409 with `Retry-After`. Each policy's
   * `maxWaitersPerKey` caps one key. Default 10,000.
   */
  maxWaiters?: number;
  /**
   * Encrypt every stored answer (status, headers and body; a `run()`
   * result) with AES-256-GCM under a keyring, bound to its record and to
   * the fingerprint of the request it answers. Unset:
   * answers are stored as they are. An answer that does not decrypt is
   * never replayed (see `StoredAnswerUnreadableError`).
   */
  encryption?: AnswerEncryptionOptions;
}

/**
 * One request to protect.
 *
 * @public
 */
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
  /**
   * Aborts this request's wait (the caller went away); never the execution.
   * A function is called only when the request waits.
   */
  signal?: AbortSignal | (() => AbortSignal);
  /** Route-level policy, over the operation's. */
  policy?: Partial<OperationPolicy>;
}

/**
 * What {@link IdempotencyCoordinator.begin} decided for a request.
 *
 * @public
 */
export type Begun =
  /** This request executes: run the side effect, then complete or release. */
  | { execution: Execution; replay?: undefined; waited: boolean }
  /** Answer with the stored result; the side effect is not run. */
  | { execution?: undefined; replay: string; waited: boolean };

/**
 * The answer to a protected request.
 *
 * @public
 */
export interface RunResult<T> {
  value: T;
  /** True when the value came from the store instead of this execution. */
  replayed: boolean;
  /** True when this request waited for another execution first. */
  waited: boolean;
  /** The epoch this request executed under, when it executed. */
  epoch?: number;
}

/** One request's way through `begin`: what its claims, decisions and waits share. */
interface Attempt {
  readonly request: RunRequest;
  readonly policy: OperationPolicy;
  readonly recordKey: string;
  readonly report: ExecutionReport;
  /** When this request stops waiting (epoch ms): its policy's `maxWaitMs`, or its own deadline. */
  readonly waitUntil: number;
  /** It has waited for another execution: a store failure no longer fails open, and a replay is reported `waited`. */
  waited: boolean;
  /** Aborts its waits (the caller went away), asked for at its first wait. */
  signal: AbortSignal | undefined;
  /** How the last wait ended: another waiter's claim answers this one, or this one claims for them. */
  recheck: Recheck;
}

/** A claim the store could not answer. */
interface StoreFailure {
  status: 'failed';
  error: unknown;
}

/** A claim's answer when another execution holds the key. */
type HeldClaim = Extract<ClaimResult, { status: 'in_progress' }>;

/** Names this process in its owner tokens: random, so no two processes share one. */
const PROCESS_TOKEN = randomUUID();
let claims = 0;

/**
 * A token no other claim, in this process or any other, ever gets: the
 * process's random token and a count. Cheaper than a random UUID per claim,
 * and as unique, which is all an owner token has to be.
 */
function ownerToken(): string {
  return `${PROCESS_TOKEN}.${(++claims).toString(36)}`;
}

/** Marks a stored `run()` result that could not be serialised (the side effect ran). */
const UNSTORABLE = '!';

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
 *
 * @public
 */
export class IdempotencyCoordinator {
  private readonly policies = new Map<string, OperationPolicy>();
  private readonly running = new RunningExecutions();
  private readonly replays: ReplayCache | undefined;
  private readonly waiting: WaitingRequests;
  /** See `requestRecordKey`. */
  private lastRecordKey: { operation: string; scope: string; key: string; recordKey: string } | undefined;
  /** One re-check per held key and request fingerprint for all of this coordinator's requests waiting on it. */
  private readonly rechecks = new SharedRechecks((recordKey, timeoutMs, signal) => this.store.waitForChange(recordKey, timeoutMs, signal));
  /** Seals what each execution stores and opens what a claim finds, for the record and the request's fingerprint. */
  private readonly encryption: AnswerEncryption | undefined;
  private readonly store: IdempotencyStore;

  /**
   * @throws InvalidPolicyError naming the option, for defaults or an
   *   operation that could not protect anything, or an encryption key that
   *   is not one.
   */
  constructor(private readonly options: IdempotencyOptions) {
    this.encryption = options.encryption && new AnswerEncryption(options.encryption, options.service);
    this.store = options.store;
    this.replays = options.replayCache === false ? undefined : new ReplayCache(options.replayCache);
    const maxWaiters = options.maxWaiters ?? 10_000;
    if (!isCount(maxWaiters))
      throw new InvalidPolicyError(`${options.service}: maxWaiters must be a whole number from 1 (got ${String(maxWaiters)})`);
    this.waiting = new WaitingRequests(maxWaiters);
    validatePolicy(resolvePolicy(options.defaults), `${options.service} defaults`);
    for (const operation of Object.keys(options.operations ?? {})) this.policyFor(operation);
  }

  /** This coordinator's service name. */
  get service(): string {
    return this.options.service;
  }

  /**
   * The record's identity in the store, and in the replay cache: a hash, so
   * no user text reaches the store, and a scope or key of any length costs
   * the cache 64 characters. What `inspectRecord` and `releaseRecord` (and
   * the `idempotency-records` CLI) find a record by. Unkeyed: a guessable
   * key is recovered from it by hashing candidates, so it is never logged
   * (the events carry `keyHash`, keyed with a secret).
   */
  recordKey(operation: string, scope: string, key: string): string {
    return recordKeyOf(this.options.service, operation, scope, key);
  }

  /**
   * A request's record key, hashed once for `replayFromMemory` and the
   * `begin` that follows it in the same turn: the last one is kept with
   * what it was hashed from, and used only for the same three values.
   */
  private requestRecordKey(request: RunRequest): string {
    const { operation, key } = request;
    const scope = request.scope ?? '';
    const last = this.lastRecordKey;
    if (last && last.key === key && last.scope === scope && last.operation === operation) return last.recordKey;
    const recordKey = this.recordKey(operation, scope, key);
    this.lastRecordKey = { operation, scope, key, recordKey };
    return recordKey;
  }

  /**
   * Executions begun by this coordinator that have not yet stored their
   * answer or given their key back, counted from the claim sent for them;
   * fail-open executions are not counted.
   */
  get runningExecutions(): number {
    return this.running.size;
  }

  /**
   * @internal The registry of this coordinator's running executions, for an
   * integration that can end some of them early on shutdown (see
   * `IdempotencyModule.drain`).
   */
  get executions(): RunningExecutions {
    return this.running;
  }

  /**
   * Resolves `true` once every execution this coordinator has begun has
   * stored its answer or given its key back (its store call returned,
   * whatever it answered), and every claim sent has been answered, or
   * `false` when some still run after `timeoutMs`. Await it on shutdown,
   * after the server stopped taking requests and before the store is
   * closed: an execution whose client went away goes on without it, and its
   * answer can be stored only while the store is open (closed under it, the
   * key stays held until its lease ends and the retry after that runs the
   * work again). `IdempotencyModule.drain` does this for a NestJS app.
   */
  drain(timeoutMs: number): Promise<boolean> {
    return this.running.drained(timeoutMs);
  }

  /**
   * The policy `operation` runs under, with a route's own layer on top;
   * resolved and checked once per operation and cached.
   *
   * @throws InvalidPolicyError naming the option.
   */
  policyFor(operation: string, route?: Partial<OperationPolicy>): OperationPolicy {
    if (route)
      return validatePolicy(resolvePolicy(this.options.defaults, this.options.operations?.[operation], route), `operation ${operation}`);
    let policy = this.policies.get(operation);
    if (!policy) {
      policy = validatePolicy(resolvePolicy(this.options.defaults, this.options.operations?.[operation]), `operation ${operation}`);
      this.policies.set(operation, policy);
    }
    return policy;
  }

  /**
   * Decide `request` from memory when this process can: the stored result
   * (as `begin`'s `replay`) of a completed record it has replayed before
   * (see `replayCache`), with no store call and no promise. `undefined`
   * when only the store can tell: then call {@link begin}, which looks here
   * first too. Like `begin`, it is the request's decision: it reports
   * `replayed` (or `mismatched`) to the observer, so call it once per
   * request, and `begin` only when it returns `undefined`. For a caller that
   * answers a replay at once, as the NestJS integration does over HTTP.
   *
   * @throws KeyReusedError (422) when the key was used for another request.
   */
  replayFromMemory(request: RunRequest): string | undefined {
    if (!this.replays) return undefined;
    return this.knownReplay(request, this.requestRecordKey(request));
  }

  private knownReplay(request: RunRequest, recordKey: string, report?: ExecutionReport): string | undefined {
    const known = this.replays?.get(recordKey);
    if (!known) return undefined;
    report ??= this.reporter(request);
    if (known.fingerprint !== request.fingerprint) {
      report(IdempotencyOutcome.Mismatched);
      throw new KeyReusedError('This Idempotency-Key was already used for a different request');
    }
    report(IdempotencyOutcome.Replayed);
    return known.result;
  }

  /**
   * Claim the request's key, or wait for the execution that holds it, or
   * find its stored result. The caller of an `execution` must end it with
   * `complete` or `release`; {@link run} does that for an action.
   *
   * @throws KeyReusedError (422) when the key was used for another request.
   * @throws InFlightError (409) when another execution holds the key and this
   *   request may not, or can no longer, wait, or when too many requests
   *   already wait (`maxWaitersPerKey`, `maxWaiters`).
   * @throws StoreUnavailableError (503) when the store fails and the
   *   operation fails closed, or whenever it fails after this request saw
   *   the key held: fail-open never runs next to a live holder.
   * @throws StoredAnswerUnreadableError (500) when the key's record is
   *   completed but its answer cannot be read (see `encryption`).
   * @throws RecordVersionError (500) when the store holds the key's record
   *   in a format version this library does not read.
   * @throws SchemaVersionError (500) when the store's schema is behind this
   *   release, and StoreRefusedError (500) when the store refuses this
   *   process (credentials, grants, ACL): both even under `fail-open`.
   *
   * @example
   * const begun = await idempotency.begin({ operation: 'orders.create', key, fingerprint });
   * if (begun.replay !== undefined) return JSON.parse(begun.replay);
   * try {
   *   const order = await orders.create(body, begun.execution.epoch);
   *   await begun.execution.complete(JSON.stringify(order));
   *   return order;
   * } catch (error) {
   *   await begun.execution.release();
   *   throw error;
   * }
   */
  async begin(request: RunRequest, policy = this.policyFor(request.operation, request.policy)): Promise<Begun> {
    if (policy.transactional && !isTransactionalStore(this.store)) {
      throw new TypeError(`Operation ${request.operation} is transactional, but its store has no transactional completion`);
    }
    const recordKey = this.requestRecordKey(request);
    const report = this.reporter(request);
    const known = this.knownReplay(request, recordKey, report);
    if (known !== undefined) return { replay: known, waited: false };
    const waitUntil = Math.min(Date.now() + policy.maxWaitMs, request.deadline ?? Infinity);
    const attempt: Attempt = { request, policy, recordKey, report, waitUntil, waited: false, signal: undefined, recheck: { by: 'own' } };
    for (;;) {
      const owner = ownerToken();
      const claim = await this.claim(attempt, owner);
      const begun = await this.decide(attempt, owner, claim);
      if (begun) return begun;
      await this.wait(attempt, claim as HeldClaim);
      attempt.waited = true;
    }
  }

  /**
   * Ask the store for the key (or take the answer of another waiter's
   * claim, see `SharedRechecks`). Counted as running from the claim, not
   * from its answer: a claim in flight when shutdown drains must not come
   * back claimed to a store closed since. A claimed execution takes the
   * count over; anything else gives it back (see `decide`).
   */
  private async claim(attempt: Attempt, owner: string): Promise<ClaimResult | StoreFailure> {
    const { request, policy, recordKey, recheck } = attempt;
    this.running.started();
    try {
      if (recheck.by === 'follow') return await recheck.answer;
      const started = performance.now();
      const { leaseMs, heartbeatMs } = policy;
      const claiming = traceClaim(
        () => this.store.claim({ recordKey, fingerprint: request.fingerprint, owner, leaseMs, heartbeatMs }),
        () => ({ service: this.options.service, operation: request.operation, keyHash: hashKey(request.key) }),
      );
      // The other waiters see the key as a claim of theirs would: held, by this request when it claimed.
      if (recheck.by === 'lead') recheck.share(claiming.then((answer) => heldBy(answer, request.fingerprint, leaseMs)));
      const claim = await claiming;
      this.options.observer?.claimLatency?.(this.options.service, request.operation, performance.now() - started);
      return claim;
    } catch (error) {
      this.running.ended();
      return { status: 'failed', error };
    }
  }

  /**
   * What the claim's answer means for this request: it executes (claimed,
   * or unprotected under fail-open), replays, is refused, or - the key
   * held by another execution - `undefined`: it waits.
   */
  private async decide(attempt: Attempt, owner: string, claim: ClaimResult | StoreFailure): Promise<Begun | undefined> {
    const { request, policy, recordKey, report, waited } = attempt;
    if (claim.status === 'failed') {
      const { error } = claim;
      // A record the store found but will not read may stand for a side effect that ran: never fail open on it.
      if (isIdempotencyError(error, RecordVersionError)) throw this.refused(error, report);
      report(IdempotencyOutcome.StoreError, { error });
      // A store that answers but lacks its schema, or refuses this process (credentials, grants, ACL), would
      // let every request through unprotected, every retry of a charge charged again: refuse instead.
      if (isIdempotencyError(error, SchemaVersionError) || isIdempotencyError(error, StoreRefusedError)) throw error;
      if (policy.onStoreFailure !== 'fail-open' || waited) throw unavailable(error);
      report(IdempotencyOutcome.FailOpen);
      return { execution: this.execution(attempt, owner, 0), waited };
    }
    if (claim.status === 'claimed') return { execution: await this.claimed(attempt, owner, claim.epoch), waited };
    this.running.ended();
    if (claim.fingerprint !== request.fingerprint) {
      report(IdempotencyOutcome.Mismatched);
      throw new KeyReusedError('This Idempotency-Key was already used for a different request');
    }
    if (claim.status === 'completed') {
      const result = this.readable(recordKey, claim.fingerprint, claim.result, report);
      if (claim.remainingMs !== undefined) this.replays?.set(recordKey, claim.fingerprint, result, claim.remainingMs);
      report(waited ? IdempotencyOutcome.Waited : IdempotencyOutcome.Replayed);
      return { replay: result, waited };
    }
    return undefined;
  }

  /** The execution of a claimed key, in its store transaction under `transactional`. */
  private async claimed(attempt: Attempt, owner: string, epoch: number): Promise<Execution> {
    const { store } = this;
    const { policy, recordKey, report } = attempt;
    let transaction: StoreTransaction | undefined;
    if (policy.transactional && isTransactionalStore(store)) {
      try {
        transaction = await store.begin(recordKey, owner);
      } catch (error) {
        report(IdempotencyOutcome.StoreError, { epoch, error });
        await this.execution(attempt, owner, epoch).release();
        throw new StoreUnavailableError('The idempotency store could not open a transaction; the request was not executed', {
          cause: error,
        });
      }
    }
    return this.execution(attempt, owner, epoch, transaction);
  }

  /**
   * The one way an execution is made: unprotected (epoch 0, under
   * fail-open: nothing claimed, nothing counted), or of a claimed key,
   * counted as running until it ends. A result that cannot be stored is
   * kept in this process, so it replays instead of running the action
   * again: for the whole retention, not `maxAgeMs`, since the store has no
   * answer to ask for after it. A result is sealed here, where the
   * request's fingerprint is known: the store's `complete` is not told it.
   */
  private execution(attempt: Attempt, owner: string, epoch: number, transaction?: StoreTransaction): Execution {
    const { request, policy, recordKey, report } = attempt;
    const { store } = this;
    if (epoch === 0) return new Execution({ store, recordKey, owner, epoch, policy, report });
    const { replays, encryption } = this;
    // One literal, not a spread of the parts above: this runs on every first execution.
    return new Execution({
      store,
      recordKey,
      owner,
      epoch,
      policy,
      report,
      transaction,
      running: this.running,
      remember: replays && ((result) => replays.setUnstored(recordKey, request.fingerprint, result, policy.retentionMs)),
      seal: encryption && ((result) => encryption.seal(recordKey, this.boundFingerprint(request.fingerprint), result)),
    });
  }

  /**
   * Wait for the execution holding the key to end: its completion signal,
   * or the lease's end, which re-checks a holder that died silently; or
   * refuse with 409 when this request may not, or can no longer, wait.
   */
  private async wait(attempt: Attempt, held: HeldClaim): Promise<void> {
    const { request, policy, recordKey, report } = attempt;
    const remaining = attempt.waitUntil - Date.now();
    // Past a cap on waiting requests, answered as under `reject`; `enter` counts this one until its wait ends.
    if (policy.inFlight === 'reject' || remaining <= 0 || !this.waiting.enter(recordKey, policy.maxWaitersPerKey)) {
      report(IdempotencyOutcome.RejectedInFlight);
      const retryAfterSeconds = Math.max(1, Math.ceil(held.leaseRemainingMs / 1000));
      throw new InFlightError('A request with this Idempotency-Key is still being processed', retryAfterSeconds);
    }
    try {
      attempt.signal ??= typeof request.signal === 'function' ? request.signal() : request.signal;
      try {
        // Grouped by fingerprint too: the re-check's claim answers the request it was made for, not another.
        attempt.recheck = await this.rechecks.wait(recordKey, request.fingerprint, held.leaseRemainingMs, remaining, attempt.signal);
      } catch (error) {
        if (isIdempotencyError(error, RecordVersionError)) throw this.refused(error, report);
        report(IdempotencyOutcome.StoreError, { error });
        throw unavailable(error);
      }
    } finally {
      this.waiting.leave(recordKey);
    }
    // A lead claims even if aborted since: the other waiters wait for its answer.
    if (attempt.signal?.aborted && attempt.recheck.by !== 'lead') {
      report(IdempotencyOutcome.Abandoned);
      attempt.signal.throwIfAborted();
    }
  }

  /**
   * The stored answer, decrypted for the record and the fingerprint it
   * carries (the request's: a claim compared them). One that cannot be read
   * is never replayed and its request never executed again (the action
   * ran): the caller gets a 500, the observer the reason, and the record
   * stays as it is, so a keyring put right replays it.
   */
  private readable(recordKey: string, fingerprint: string, stored: string, report: ExecutionReport): string {
    try {
      // The request's own fingerprint, never the store's form of it: an answer opens under either (see AnswerEncryption).
      return openStoredAnswer(this.encryption, recordKey, fingerprint, stored);
    } catch (error) {
      report(IdempotencyOutcome.Unreadable, { error });
      throw new StoredAnswerUnreadableError(
        'This request was executed, but its stored answer cannot be read, so it is neither replayed nor executed again',
        { cause: error },
      );
    }
  }

  /**
   * The form of the fingerprint an answer is sealed for: the request's as
   * its record keeps it, which every earlier release opens and
   * `inspectRecord` finds there. Opening never asks the store (see
   * `AnswerEncryption`).
   */
  private boundFingerprint(fingerprint: string): string {
    return this.store.keptFingerprint?.(fingerprint) ?? fingerprint;
  }

  /**
   * A record in a format version this library does not read (see
   * `RecordVersionError`), answered as an unreadable answer is: a 500, the
   * observer told why, the record left for the release that wrote it.
   */
  private refused(error: Error, report: ExecutionReport): Error {
    report(IdempotencyOutcome.Unreadable, { error });
    return error;
  }

  /**
   * Reports one request's events, to the observer and on the outcome
   * channel. Each is a plain object of data fields (an object literal with
   * a getter costs about a microsecond to build), so the key's hash is
   * computed once per request, at its first event, and not at all when
   * nobody hears of it - nor for a routine event that only observers which
   * never read its hash hear of (see `ROUTINE_KEY_HASH_UNREAD`).
   */
  private reporter(request: RunRequest): ExecutionReport {
    const { observer, service } = this.options;
    const routineHashRead = !observer || readsRoutineKeyHash(observer);
    let keyHash: string | undefined;
    return (outcome, extra) => {
      const heard = outcomesHeard();
      if (!observer && !heard) return;
      const hashed = routineHashRead || heard || !ROUTINE_OUTCOMES.has(outcome);
      const event: IdempotencyEvent = {
        outcome,
        service,
        operation: request.operation,
        keyHash: hashed ? (keyHash ??= hashKey(request.key)) : '',
      };
      // Assigned, not spread from a default `{}`: no extra object per event, and the same fields as before.
      if (extra && 'epoch' in extra) event.epoch = extra.epoch;
      if (extra && 'error' in extra) event.error = extra.error;
      observer?.record(event);
      publishOutcome(event);
    };
  }

  /**
   * Execute `action` once for this request's key, or answer from the store.
   * A final value (see the policy's `isFinal`) is stored as JSON and
   * replayed as such (so is a value on which `isFinal` threw: it is reported
   * `is_final_threw`); anything else, or a thrown error, releases the key. A
   * value JSON cannot hold (a `BigInt`, a cycle) is reported `unstorable`
   * and its record completes as an error: a retry throws
   * `ResultNotStoredError` instead of running the side effect again.
   *
   * @example
   * const fingerprint = requestFingerprint({ method: 'POST', path: '/charges', body: order });
   * const { value, replayed } = await idempotency.run(
   *   { operation: 'payments.charge', key, fingerprint },
   *   async ({ epoch, signal }) => ledger.charge(order, { epoch, signal }),
   * );
   */
  async run<T>(request: RunRequest, action: (execution: Execution) => Promise<T>): Promise<RunResult<T>> {
    const policy = this.policyFor(request.operation, request.policy);
    const begun = await this.begin(request, policy);
    if (begun.replay !== undefined) return { value: parseStored<T>(begun.replay), replayed: true, waited: begun.waited };
    const { execution, waited } = begun;
    let value: T;
    try {
      value = await runInExecution(execution, () => action(execution));
    } catch (error) {
      await execution.release();
      throw error;
    }
    if (!execution.isFinal(value)) {
      await execution.release();
      return { value, replayed: false, waited, ...(execution.protected && { epoch: execution.epoch }) };
    }
    let stored: string;
    let unstorable: unknown;
    try {
      stored = JSON.stringify(value ?? null); // JSON has no `undefined`: a void result replays as null
    } catch (error) {
      [stored, unstorable] = [`${UNSTORABLE}${error instanceof Error ? error.message : String(error)}`, error];
    }
    await execution.complete(stored, unstorable);
    return { value, replayed: false, waited, ...(execution.protected && { epoch: execution.epoch }) };
  }
}

function unavailable(cause: unknown): StoreUnavailableError {
  return new StoreUnavailableError('The idempotency store is unavailable; the request was not executed', { cause });
}

/** A claim's answer as another request for the same key would have found it: a `claimed` key is held. */
function heldBy(answer: ClaimResult, fingerprint: string, leaseMs: number): ClaimResult {
  return answer.status === 'claimed' ? { status: 'in_progress', fingerprint, leaseRemainingMs: leaseMs } : answer;
}

function parseStored<T>(stored: string): T {
  if (stored.startsWith(UNSTORABLE)) {
    throw new ResultNotStoredError(`This request was executed, but its result could not be stored: ${stored.slice(1)}`);
  }
  return JSON.parse(stored) as T;
}
