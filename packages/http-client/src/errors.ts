import type { AttemptOutcome } from './attempt-event';

/**
 * The errors a call can end with. Only retryable failures that ran out of
 * room (or may not be retried), and answers too large to read, end here: a
 * non-retryable response (400, 404, 422...) is returned to the caller as an
 * `HttpResponse`, never thrown.
 *
 * Each error carries a marker property so the `isXError` guards still work
 * when two copies of the package are loaded.
 */

const marker = Symbol.for('idempotency-chain.http-client.error');

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
 * Root of every error a call through `IdempotentHttpClient` ends with.
 *
 * @public
 */
export abstract class HttpCallError extends Error {
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
 * catch (error) { if (isRetriesExhaustedError(error)) log.warn(error.lastStatus); }
 *
 * @public
 */
export class RetriesExhaustedError extends HttpCallError {
  constructor(call: string, last: LastAttempt, reason?: string) {
    super('attempts', call, last, reason);
  }
}

/**
 * The call's deadline — the client's `deadlineMs` or the caller's inbound
 * deadline, whichever is sooner — left no room for another attempt or wait.
 *
 * @example
 * if (isDeadlineExceededError(error) && error.limit === 'inbound-deadline') { ... }
 *
 * @public
 */
export class DeadlineExceededError extends HttpCallError {
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
 * catch (error) { if (isOutcomeUnknownError(error)) await reconcile(order); }
 *
 * @public
 */
export class OutcomeUnknownError extends HttpCallError {
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
 * if (isResponseTooLargeError(error)) log.warn({ maxBytes: error.maxBytes }, 'answer too large');
 *
 * @public
 */
export class ResponseTooLargeError extends HttpCallError {
  constructor(
    call: string,
    last: LastAttempt,
    /** The limit the body went past, in bytes. */
    readonly maxBytes: number,
  ) {
    super('response-size', call, last, `a body over ${maxBytes} bytes (maxResponseBytes)`);
  }
}

function is<T extends HttpCallError>(name: string) {
  return (error: unknown): error is T =>
    typeof error === 'object' && error !== null && marker in error && (error as { name?: unknown }).name === name;
}

/**
 * Guards that hold across two loaded copies of the package.
 *
 * @example
 * catch (error) { if (isHttpCallError(error)) return reply(503, error.limit); throw error; }
 *
 * @public
 */
export const isHttpCallError = (error: unknown): error is HttpCallError => typeof error === 'object' && error !== null && marker in error;
/**
 * True for a `RetriesExhaustedError`, also one thrown by another loaded copy of this package.
 *
 * @public
 */
export const isRetriesExhaustedError = is<RetriesExhaustedError>('RetriesExhaustedError');
/**
 * True for a `DeadlineExceededError`, also one thrown by another loaded copy of this package.
 *
 * @public
 */
export const isDeadlineExceededError = is<DeadlineExceededError>('DeadlineExceededError');
/**
 * True for a `OutcomeUnknownError`, also one thrown by another loaded copy of this package.
 *
 * @public
 */
export const isOutcomeUnknownError = is<OutcomeUnknownError>('OutcomeUnknownError');
/**
 * True for a `ResponseTooLargeError`, also one thrown by another loaded copy of this package.
 *
 * @public
 */
export const isResponseTooLargeError = is<ResponseTooLargeError>('ResponseTooLargeError');
