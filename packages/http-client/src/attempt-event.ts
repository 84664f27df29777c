/**
 * How one attempt ended.
 *
 * - `ok`: a 1xx-3xx response.
 * - `http-error`: a 4xx/5xx response (retryable or not: see `retried`).
 * - `timeout`: the per-attempt timeout fired before the response was read.
 * - `reset`: the connection broke after the request was sent (the reply was
 *   lost; the server may have done the work).
 * - `refused`: nothing listened; the request never reached a server.
 * - `deadline`: the call's deadline cut the attempt short.
 * - `too-large`: the response body went past `maxResponseBytes`; reading stopped.
 *
 * @public
 */
export type AttemptOutcome = 'ok' | 'http-error' | 'timeout' | 'reset' | 'refused' | 'deadline' | 'too-large';

/**
 * One attempt of one call, reported after the attempt ends. The scenario
 * runner draws its sequence diagrams from these, so they carry everything a
 * diagram needs and never the raw key.
 *
 * @example
 * new IdempotentHttpClient({ baseUrl, onAttempt: (e) => log.info(e, 'attempt') });
 *
 * @public
 */
export interface AttemptEvent {
  /** Same for every attempt of one logical call. */
  callId: string;
  method: string;
  path: string;
  /** 1-based, as sent in `request-attempt`. */
  attempt: number;
  /** `hashKey` of the key sent on this attempt; absent under the `none` policy. */
  keyHash?: string;
  outcome: AttemptOutcome;
  status?: number;
  /** True when another attempt follows this one. */
  retried: boolean;
  /** When retried: how long the client waits first (`Retry-After` or backoff), in ms. */
  waitMs?: number;
  /** Epoch ms when the attempt started. */
  startedAt: number;
  durationMs: number;
  /** The server answered from its store (`idempotent-replayed: true`). */
  replayed?: boolean;
}

/**
 * Receives every attempt event; must not throw (a throw is swallowed).
 *
 * @public
 */
export type AttemptListener = (event: AttemptEvent) => void;
