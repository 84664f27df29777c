import type { Registry } from 'prom-client';
import type { AnswerEncryptionOptions } from '../encryption-keys';
import type { IdempotencyObserver } from '../observer';
import type { OperationPolicy } from '../policy';
import type { ReplayCacheOptions } from '../replay-cache';
import type { IdempotencyStore } from '../store';
import type { Scope } from './scope';

/**
 * What a route does when a request carries no `Idempotency-Key`.
 *
 * - `required`: refuse it with 400 (`missing-key`) before any claim.
 * - `optional`: run it unprotected.
 * - `fingerprint`: the request's fingerprint (method, concrete path, query,
 *   body) becomes the key, so identical requests to the same resource
 *   collapse into one execution - a fallback for callers that send no key.
 * - `none`: no key is read and nothing is protected, even when a key is
 *   sent (switching protection off for a route).
 *
 * @public
 */
export type KeyMode = 'required' | 'optional' | 'fingerprint' | 'none';

/**
 * Options of `IdempotencyModule.forRoot` (or returned by `forRootAsync`'s factory).
 *
 * @public
 */
export interface IdempotencyModuleOptions {
  /** This service's name: part of every record's identity. */
  service: string;
  store: IdempotencyStore;
  /** Policy for every operation of this service. */
  defaults?: Partial<OperationPolicy>;
  /** Per-operation policy, over the defaults. */
  operations?: Record<string, Partial<OperationPolicy>>;
  /** What a route does without a key, unless `@Idempotent` says otherwise. Default `required`. */
  keyMode?: KeyMode;
  /**
   * Whose records a request may see: a resolver of the caller's principal or
   * tenant, or `'shared'` (see `Scope`). Unset: `principalScope`, the
   * authenticated `request.user`, refusing a request without one - and a
   * warning at boot, until the app decides.
   */
  scope?: Scope;
  /**
   * Response headers stored and replayed besides `DEFAULT_REPLAY_HEADERS`
   * (lower case). `set-cookie` is never replayed unless listed here.
   */
  replayHeaders?: string[];
  /**
   * Largest response body stored, in bytes. Default 1 MiB. A larger answer
   * still reaches its caller; its record stores a 500 `result-not-stored`
   * problem instead, so a retry never runs the handler again. Also the
   * largest body a replay decompresses for a client that does not accept
   * the stored answer's encoding: past it, that client gets 406
   * `encoding-not-acceptable`.
   */
  maxResponseBytes?: number;
  /**
   * How many bytes replays may hold decompressed at once in this process,
   * for clients that do not accept a stored answer's encoding: each counts
   * `maxResponseBytes` while it decompresses, then its decoded size until
   * it is sent. Default 8 × `maxResponseBytes`; at least `maxResponseBytes`.
   * A replay past it is answered 503 `decompression-busy` with
   * `Retry-After` (the stored answer is intact, a retry gets it), so
   * concurrent replays of one small answer cannot inflate it without bound.
   */
  maxDecompressingBytes?: number;
  /**
   * Answer replays of records this process has seen completed from memory,
   * without a round trip to the store; `false` turns it off. Default on
   * (10,000 records, 16 Mi characters). Safe: a completed record never
   * changes until its retention ends.
   */
  replayCache?: ReplayCacheOptions | false;
  /**
   * How many requests may wait for other executions at once in this
   * process; the next one is answered 409 with `Retry-After`. Default
   * 10,000. The policy's `maxWaitersPerKey` caps one key.
   */
  maxWaiters?: number;
  /**
   * Keep each execution in an `AsyncLocalStorage`, so `currentExecution()`
   * works anywhere below a handler (a service it calls). Default `false`: on
   * Node 20 an active `AsyncLocalStorage` costs every promise of the process
   * (about 25 µs of CPU per request, measured), and a handler gets its
   * execution for free with `@CurrentExecution()`.
   */
  currentExecution?: boolean;
  /**
   * Encrypt every stored answer (status, headers and body) at rest with
   * AES-256-GCM under a keyring, each bound to its record and to the
   * fingerprint of the request it answers (see
   * `AnswerEncryptionOptions`, and `encryptionKeysFromEnv` for
   * `IDEMPOTENCY_ENCRYPTION_KEYS`). An answer that does not decrypt is
   * answered 500 `stored-answer-unreadable`: never replayed, never executed
   * again. Unset: answers are stored as they are.
   */
  encryption?: AnswerEncryptionOptions;
  /** More observers of the coordinator's events (logs, traces), next to the metrics. */
  observers?: IdempotencyObserver[];
  /**
   * Where the Prometheus metrics are registered: a given registry, prom-client's
   * default `register` when unset, or a private registry nobody scrapes (`false`).
   */
  metrics?: { registry?: Registry } | false;
  /** Close the store on application shutdown. Default `false`: the app may share it. */
  closeStore?: boolean;
  /**
   * On application shutdown, how long to wait for executions still running
   * (their clients gone, so the server no longer waits for them) to store
   * their answers, before the store is closed. Those still running after it
   * are logged. Default 10 000 ms. The platform's grace period (Kubernetes:
   * 30 s from SIGTERM to SIGKILL) covers the server's close, this drain and
   * every other shutdown hook. See `IdempotencyModule.drain`.
   */
  drainTimeoutMs?: number;
}

/**
 * Options of `@Idempotent`: how the route reads its key, and its policy over the operation's.
 *
 * @public
 */
export type IdempotentOptions = {
  /** Overrides the module's `keyMode` for this route. */
  keyMode?: KeyMode;
  /** Fingerprint only these top-level body fields (e.g. to ignore a client timestamp). */
  fingerprintFields?: string[];
  /** Overrides the module's `scope` for this route (e.g. `'shared'` for a partner's webhook). */
  scope?: Scope;
} & Partial<OperationPolicy>;

/** What `@Idempotent` stores on a handler. */
export interface IdempotentMetadata {
  operation: string;
  keyMode?: KeyMode;
  fingerprintFields?: string[];
  scope?: Scope;
  policy: Partial<OperationPolicy>;
}
