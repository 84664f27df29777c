import type { Dispatcher } from 'undici';
import type { AttemptListener } from './attempt-event';
import type { KeyPolicy } from './key-policy';
import type { BackoffOptions } from './retry-delay';

/** Default `maxResponseBytes`: 4 MiB, far above an API answer, yet a hundred calls at once stay under half a GiB. */
export const DEFAULT_MAX_RESPONSE_BYTES = 4 * 1024 * 1024;

/**
 * How an `IdempotentHttpClient` talks to one downstream service.
 *
 * @public
 */
export interface IdempotentClientOptions {
  /** Origin (and optional path prefix) of the downstream service, e.g. `http://payments:3002`. */
  baseUrl: string;
  /** Where the `Idempotency-Key` comes from: `propagated` (default), `none`, or a `KeyStrategy`. */
  keyPolicy?: KeyPolicy;
  /** Timeout of each attempt, in ms (default 2000; at most 2^31-1, Node's longest timer). */
  attemptTimeoutMs?: number;
  /** Attempts per call, the first included (default 3). */
  maxAttempts?: number;
  /** Wait between attempts (capped, jittered exponential; `Retry-After` wins, up to `maxRetryAfterMs`). */
  backoff?: BackoffOptions;
  /** Budget of one call across all attempts, in ms. The inbound deadline still applies when sooner. */
  deadlineMs?: number;
  /**
   * Largest response body read, in bytes (default 4 MiB, `DEFAULT_MAX_RESPONSE_BYTES`).
   * A larger one is cut off (its connection closed) and the call fails with
   * `ResponseTooLargeError`, so one answer cannot take the process's memory.
   */
  maxResponseBytes?: number;
  /**
   * Retry an unsafe method (POST, PATCH...) sent without an `Idempotency-Key`
   * after an unknown outcome (default `false`: the call ends with
   * `OutcomeUnknownError`). The server cannot tell such a retry from a new
   * request: set it only for a server that deduplicates by other means, or to
   * show what happens when it does not.
   */
  retryUnkeyed?: boolean;
  /**
   * Send the inbound `Idempotency-Key` as it came when no `@Idempotent` route
   * has identified the request (default `false`: such a call is refused, see
   * `resolveIntentKey`). Two callers sending one key then share one record
   * downstream: set it only when every caller of this hop is one trusted
   * principal.
   */
  forwardUnboundKey?: boolean;
  /**
   * Headers sent on every call, such as this service's credentials for the
   * next hop (`{ authorization: 'Bearer …' }`); a call's own `headers` win.
   */
  headers?: Record<string, string>;
  /** Called once per attempt, after it ends. */
  onAttempt?: AttemptListener;
  /** undici dispatcher to send through; by default a keep-alive `Agent` owned (and closed) by the client. */
  dispatcher?: Dispatcher;
}

/**
 * One logical call. Its attempts share a key unless the policy says otherwise.
 *
 * @public
 */
export interface HttpRequest {
  method: string;
  /** Path (and query) under `baseUrl`. */
  path: string;
  /** JSON-serialised unless a string or bytes. */
  body?: unknown;
  headers?: Record<string, string>;
  /** Use exactly this key (under `propagated`). */
  key?: string;
  /** Derive the key from business identity when no key is bound (under `propagated`). */
  businessKey?: string;
  /**
   * The caller's scope `businessKey` is derived within (`account:acct-7`;
   * `'shared'` for an id unique across callers). Defaults to the scope the
   * `@Idempotent` route resolved; required outside one (a message handler, a job).
   */
  scope?: string;
  /** Name of this sub-call: derives a child of the bound key, distinct per name (under `propagated`). */
  callName?: string;
}

/**
 * Options of the `get`/`post` shorthands.
 *
 * @public
 */
export type CallOptions = Omit<HttpRequest, 'method' | 'path' | 'body'>;

/**
 * The answer to a call: the first non-retryable response, body parsed.
 *
 * @public
 */
export interface HttpResponse<T> {
  status: number;
  /** Lower-case names; repeated headers joined with `, `. */
  headers: Record<string, string>;
  /** Parsed JSON for JSON content types, text otherwise. */
  body: T;
  /** Attempts made, the first included. */
  attempts: number;
  /** The key sent on the last attempt, for the caller's own records. */
  key?: string;
  /** The server answered from its idempotency store (`idempotent-replayed: true`). */
  replayed: boolean;
}
