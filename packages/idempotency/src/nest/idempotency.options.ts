import type { Registry } from 'prom-client';
import type { IdempotencyOptions } from '../coordinator';
import type { IdempotencyObserver } from '../observer';
import type { OperationPolicy } from '../policy';
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
 * Options of `IdempotencyModule.forRoot` (or returned by `forRootAsync`'s
 * factory): the coordinator's own (`service`, `store`, `defaults`,
 * `operations`, `replayCache`, `maxWaiters`, `encryption`; see
 * `IdempotencyOptions`), with `observers` in place of its single
 * `observer`, and what the module adds for its routes.
 *
 * @public
 */
export interface IdempotencyModuleOptions extends Omit<IdempotencyOptions, 'observer'> {
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
   * Largest answer stored, in bytes. Default 1 MiB. Over HTTP, it is the
   * response body's bytes. A larger answer still reaches its caller; its
   * record stores a 500 `result-not-stored` problem instead, so a retry
   * never runs the handler again. For a message handler (its result, its
   * stream of values, or the final error it threw) and a GraphQL mutation
   * (its result, or the final error it threw), it is the UTF-8 bytes of the
   * answer's stored JSON: its value or values, or its error, with a few bytes
   * of framing (`{"values":[...]}`, 13 bytes for one value). A binary value
   * such as a `Buffer` counts as its JSON, about four times its bytes (a
   * plain `Uint8Array` more), so a 300 KB file in a reply takes about 1 MB
   * of the bound. Also the largest body a replay decompresses for a client
   * that does not accept the stored answer's encoding: past it, that client
   * gets 406 `encoding-not-acceptable`.
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
   * Keep each execution in an `AsyncLocalStorage`, so `currentExecution()`
   * works anywhere below a handler (a service it calls). Default `false`: on
   * Node 20 an active `AsyncLocalStorage` costs every promise of the process
   * (about 25 µs of CPU per request, measured), and a handler gets its
   * execution for free with `@CurrentExecution()`.
   */
  currentExecution?: boolean;
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
  /** Fingerprint only these top-level body fields (e.g. to ignore a client timestamp); a body that is a `Map` is read by these names as its keys. */
  fingerprintFields?: string[];
  /** Overrides the module's `scope` for this route (e.g. `'shared'` for a partner's webhook). */
  scope?: Scope;
} & Partial<OperationPolicy>;

/**
 * The response headers stored with an answer and replayed with it: those
 * that describe the representation or point at what was created. Headers
 * that belong to the connection or to this request (CORS, a request id,
 * `Set-Cookie`) are not: a replay gets its own.
 *
 * @public
 */
export const DEFAULT_REPLAY_HEADERS: readonly string[] = [
  'content-type',
  'content-disposition',
  'content-encoding',
  'content-language',
  'content-location',
  'location',
  'etag',
  'last-modified',
  'link',
];

/** `maxResponseBytes` unless set: 1 MiB. */
const DEFAULT_MAX_RESPONSE_BYTES = 1024 * 1024;
/** Replays decompressing at once by default, each counted at `maxResponseBytes`. */
const DEFAULT_DECOMPRESSIONS = 8;
/** How long shutdown waits for executions still running by default (see `drainTimeoutMs`). */
const DEFAULT_DRAIN_TIMEOUT_MS = 10_000;

const KEY_MODES: readonly KeyMode[] = ['required', 'optional', 'fingerprint', 'none'];

/** A mistyped option would quietly change what is protected: refuse it at boot, naming it. */
class InvalidOptionError extends TypeError {
  override name = 'InvalidOptionError';
}

export function checkKeyMode(keyMode: unknown, where: string): void {
  if (!KEY_MODES.includes(keyMode as KeyMode)) {
    throw new InvalidOptionError(`${where}: keyMode must be one of ${KEY_MODES.join(', ')} (got ${JSON.stringify(keyMode)})`);
  }
}

export function checkScope(scope: unknown, where: string): void {
  if (scope !== 'shared' && typeof scope !== 'function') {
    throw new InvalidOptionError(`${where}: scope must be a resolver function or 'shared' (got ${JSON.stringify(scope)})`);
  }
}

/** The module's own options, each with its default applied (the coordinator applies its own). */
export interface ModuleSettings {
  keyMode: KeyMode;
  maxResponseBytes: number;
  maxDecompressingBytes: number;
  /** Lower-case names of the response headers stored and replayed: `DEFAULT_REPLAY_HEADERS` and `replayHeaders`. */
  replayHeaders: ReadonlySet<string>;
  drainTimeoutMs: number;
}

/** What the module was given, checked (see `checkModuleOptions`), with every default applied. */
export function moduleSettings(options: IdempotencyModuleOptions): ModuleSettings {
  const maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  return {
    keyMode: options.keyMode ?? 'required',
    maxResponseBytes,
    maxDecompressingBytes: options.maxDecompressingBytes ?? DEFAULT_DECOMPRESSIONS * maxResponseBytes,
    replayHeaders: new Set([...DEFAULT_REPLAY_HEADERS, ...(options.replayHeaders ?? []).map((name) => name.toLowerCase())]),
    drainTimeoutMs: options.drainTimeoutMs ?? DEFAULT_DRAIN_TIMEOUT_MS,
  };
}

/** Check what the module was given; the policies are checked by the coordinator. */
export function checkModuleOptions(options: IdempotencyModuleOptions): void {
  const where = `IdempotencyModule (${String(options.service)})`;
  if (typeof options.service !== 'string' || options.service === '')
    throw new InvalidOptionError(`${where}: service must be a non-empty string`);
  if (typeof options.store?.claim !== 'function') throw new InvalidOptionError(`${where}: store must be an IdempotencyStore`);
  if (options.keyMode !== undefined) checkKeyMode(options.keyMode, where);
  if (options.scope !== undefined) checkScope(options.scope, where);
  const max = options.maxResponseBytes;
  if (max !== undefined && !(Number.isSafeInteger(max) && max > 0)) {
    throw new InvalidOptionError(`${where}: maxResponseBytes must be a positive whole number of bytes (got ${String(max)})`);
  }
  const budget = options.maxDecompressingBytes;
  if (budget !== undefined && !(Number.isSafeInteger(budget) && budget >= (max ?? DEFAULT_MAX_RESPONSE_BYTES))) {
    // Each decompression reserves maxResponseBytes: a smaller budget would refuse every one.
    throw new InvalidOptionError(
      `${where}: maxDecompressingBytes must be a whole number of bytes, at least maxResponseBytes (got ${String(budget)})`,
    );
  }
  const drain = options.drainTimeoutMs;
  if (drain !== undefined && !(Number.isFinite(drain) && drain >= 0)) {
    throw new InvalidOptionError(`${where}: drainTimeoutMs must be a number of milliseconds, 0 or more (got ${String(drain)})`);
  }
  for (const name of options.replayHeaders ?? []) {
    if (typeof name !== 'string' || !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) {
      throw new InvalidOptionError(`${where}: replayHeaders must be header names (got ${JSON.stringify(name)})`);
    }
  }
}
