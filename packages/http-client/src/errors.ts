import type { AttemptOutcome } from './attempt-event';

/**
 * The errors a call can end with. Only retryable failures that ran out of
 * room (or may not be retried), and answers too large to read, end here: a
 * non-retryable response (400, 404, 422...) is returned to the caller as an
 * `HttpResponse`, never thrown.
 *
 * Each error carries a marker property so that `isHttpCallError` still
 * recognises it when two copies of the package are loaded.
 */

const marker = Symbol.for('idempotency-chain.http-client.error');

/**
 * Give a class its name in writing. The guard tells the classes of two
 * copies of the package apart by name, and a bundler that minifies an app
 * renames classes (`RetriesExhaustedError` would be `t` in one copy, `n` in
 * the other, and another class `t` too); a name set here is kept.
 */
function keepName(kind: abstract new (...args: never[]) => unknown, name: string): void {
  Object.defineProperty(kind, 'name', { value: name, configurable: true });
}

/**
 * Which limit ended a call.
 *
 * @public
 */
export type CallLimit = 'attempts' | 'deadline' | 'inbound-deadline' | 'no-key' | 'response-size';

/**
 * What the last attempt of a failed call saw.
 *
 * @public
 */
export interface LastAttempt {
  /** Attempts made, including the first. */
  attempts: number;
  outcome?: AttemptOutcome;
  /** HTTP status of the last response, when there was one. */
  status?: number;
  /** The last response itself (e.g. the 409 problem document), when there was one. */
  response?: { status: number; headers: Record<string, string>; body: unknown };
  /** The transport error of the last attempt, or the last response's status as text. */
  cause?: unknown;
}

const LIMIT_TEXT: Record<CallLimit, string> = {
  attempts: 'the attempt limit',
  deadline: "the client's overall deadline",
  'inbound-deadline': "the inbound deadline (the caller's request-timeout-ms)",
  'no-key': 'no retry of an unsafe method sent without an Idempotency-Key (it could run twice)',
  'response-size': 'the response size limit (maxResponseBytes)',
};

/**
 * Root of every error a call through `IdempotentHttpClient` ends with. Test
 * errors with {@link isHttpCallError} (`isHttpCallError(error,
 * RetriesExhaustedError)` for one class) rather than `instanceof`. An app can
 * load two copies of this package (two versions under `node_modules`, one
 * pulled in by a library of yours), and then has two `RetriesExhaustedError`
 * classes; `instanceof` knows only its own, the guard recognises both, by the
 * marker every error carries and the class's name. The classes stay exported
 * for the types and for the guard to be given.
 *
 * @public
 */
export abstract class HttpCallError extends Error {
  static {
    keepName(this, 'HttpCallError');
  }
  readonly [marker] = true;
  readonly attempts: number;
  readonly lastOutcome?: AttemptOutcome;
  readonly lastStatus?: number;
  readonly lastResponse?: LastAttempt['response'];

  constructor(
    /** Which limit ended the call. */
    readonly limit: CallLimit,
    call: string,
    last: LastAttempt,
    /** What ended the call, in words, when more precise than the limit's name. */
    reason: string = LIMIT_TEXT[limit],
  ) {
    const seen = last.status !== undefined ? `status ${last.status}` : (last.outcome ?? 'nothing');
    super(`${call}: ${reason} ended the call after ${last.attempts} attempt(s); last: ${seen}`, {
      cause: last.cause,
    });
    this.name = new.target.name;
    this.attempts = last.attempts;
    this.lastOutcome = last.outcome;
    this.lastStatus = last.status;
    this.lastResponse = last.response;
  }
}

/**
 * Every attempt allowed ended in an unknown outcome (timeout, reset, 502/503/504, the in-flight 409),
 * or the last one's `Retry-After` asked for longer than `backoff.maxRetryAfterMs`
 * (the call ends at once rather than sleep; `lastResponse` carries that answer).
 *
 * @example
 * try { await client.post('/charges', charge); }
 * catch (error) { if (isHttpCallError(error, RetriesExhaustedError)) log.warn(error.lastStatus); }
 *
 * @public
 */
export class RetriesExhaustedError extends HttpCallError {
  static {
    keepName(this, 'RetriesExhaustedError');
  }
  constructor(call: string, last: LastAttempt, reason?: string) {
    super('attempts', call, last, reason);
  }
}

/**
 * The call's deadline — the client's `deadlineMs` or the caller's inbound
 * deadline, whichever is sooner — left no room for another attempt or wait.
 *
 * @example
 * if (isHttpCallError(error, DeadlineExceededError) && error.limit === 'inbound-deadline') { ... }
 *
 * @public
 */
export class DeadlineExceededError extends HttpCallError {
  static {
    keepName(this, 'DeadlineExceededError');
  }
  constructor(limit: 'deadline' | 'inbound-deadline', call: string, last: LastAttempt) {
    super(limit, call, last);
  }
}

/**
 * The attempt of an unsafe method (POST, PATCH...) sent without an
 * `Idempotency-Key` ended in an unknown outcome (timeout, reset, 502...) and
 * was not retried: the server may have done the work, and without a key it
 * would do it again. Whether it ran is for the caller to find out (look the
 * resource up) before sending it again. Set the client's `retryUnkeyed` to
 * retry anyway.
 *
 * @example
 * catch (error) { if (isHttpCallError(error, OutcomeUnknownError)) await reconcile(order); }
 *
 * @public
 */
export class OutcomeUnknownError extends HttpCallError {
  static {
    keepName(this, 'OutcomeUnknownError');
  }
  constructor(call: string, last: LastAttempt) {
    super('no-key', call, last);
  }
}

/**
 * The response is larger than the client's `maxResponseBytes`: it was not
 * read further (its stream destroyed, its connection closed) and is not
 * retried (the server would send it again). `lastStatus` is its status.
 *
 * @example
 * if (isHttpCallError(error, ResponseTooLargeError)) log.warn({ maxBytes: error.maxBytes }, 'answer too large');
 *
 * @public
 */
export class ResponseTooLargeError extends HttpCallError {
  static {
    keepName(this, 'ResponseTooLargeError');
  }
  constructor(
    call: string,
    last: LastAttempt,
    /** The limit the body went past, in bytes. */
    readonly maxBytes: number,
  ) {
    super('response-size', call, last, `a body over ${maxBytes} bytes (maxResponseBytes)`);
  }
}

/**
 * True for an error a call through `IdempotentHttpClient` ended with, also
 * one from another loaded copy of this package (where `instanceof` is
 * false). Given one of its error classes, true only for an error of that
 * class, and narrowed to it.
 *
 * @example
 * try {
 *   return await client.post('/charges', charge);
 * } catch (error) {
 *   if (isHttpCallError(error, DeadlineExceededError)) return reply(504, error.limit);
 *   if (isHttpCallError(error)) return reply(503, error.limit);
 *   throw error;
 * }
 *
 * @public
 */
export function isHttpCallError<T extends HttpCallError = HttpCallError>(
  error: unknown,
  kind?: abstract new (...args: never[]) => T,
): error is T {
  if (typeof error !== 'object' || error === null || !(marker in error)) return false;
  if (kind === undefined || kind.name === HttpCallError.name || error instanceof kind) return true;
  return (error as { name?: unknown }).name === kind.name;
}
