import { InFlightError, LeaseLostError, statusOutcome } from '@idempotency-chain/idempotency';
import type { AttemptOutcome } from './attempt-event';
import { AttemptTimedOut } from './attempt';
import { problemType } from './problem-type';

/** An attempt that got a response: its status, and for a 409 what tells "in flight" from "conflict". */
export interface AnsweredAttempt {
  status: number;
  /** Lower-case names. */
  headers?: Record<string, string>;
  /** The parsed body (a problem document is an object with `type`). */
  body?: unknown;
}

/** How an attempt ended, and whether its outcome is unknown enough to retry. */
export interface AttemptClassification {
  outcome: AttemptOutcome;
  retryable: boolean;
}

const RESET_CODES = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET']);
const TIMEOUT_CODES = new Set(['ETIMEDOUT', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

/**
 * The retry rule, in one place. Retry only what might not have happened, or
 * what the server says may succeed later. Which statuses those are is not
 * decided here: it is the `retryable` column of the idempotency package's
 * one status table (`statusOutcome`), the table that also decides what a
 * server stores, so a client never retries an answer the server would
 * replay, nor gives up on one the server has released.
 *
 * A 409 is retried only when it is the idempotency in-flight answer
 * ("another attempt holds this key, ask again"): its problem `type` is the
 * idempotency package's `in-flight` or `lease-lost`, or it carries
 * `Retry-After`. Any other 409 is a genuine conflict: an answer, not retried.
 *
 * | attempt ended with                               | outcome      | retried |
 * |--------------------------------------------------|--------------|---------|
 * | 1xx-3xx                                          | `ok`         | no      |
 * | 408, 425, 429, 502, 503, 504                     | `http-error` | yes (honouring `Retry-After`) |
 * | 409 in flight (problem `type` or `Retry-After`)  | `http-error` | yes (honouring `Retry-After`) |
 * | 409 conflict (anything else)                     | `http-error` | no      |
 * | any other 4xx/5xx (400, 401, 403, 404, 422, 500) | `http-error` | no      |
 * | per-attempt timeout (ours or undici's)           | `timeout`    | yes     |
 * | connection reset / closed by the other side      | `reset`      | yes     |
 * | connection refused                               | `refused`    | yes     |
 * | the call's deadline cut the attempt short        | `deadline`   | no      |
 *
 * Any other error is not an HTTP outcome (a bug, a closed client): `undefined`,
 * and the caller throws it as is, like p-retry's programming errors.
 *
 * @example
 * classifyAttempt({ status: 503 });   // { outcome: 'http-error', retryable: true }
 * classifyAttempt({ status: 422 });   // { outcome: 'http-error', retryable: false }
 * classifyAttempt({ status: 409, headers: { 'retry-after': '1' } }); // retryable: true
 */
export function classifyAttempt(ended: AnsweredAttempt | { error: unknown }): AttemptClassification | undefined {
  if ('status' in ended) {
    if (ended.status < 400) return { outcome: 'ok', retryable: false };
    const retryable = ended.status === 409 ? isInFlightAnswer(ended) : statusOutcome(ended.status).retryable;
    return { outcome: 'http-error', retryable };
  }
  if (ended.error instanceof AttemptTimedOut) {
    return ended.error.byDeadline ? { outcome: 'deadline', retryable: false } : { outcome: 'timeout', retryable: true };
  }
  const code = errorCode(ended.error);
  if (code === 'ECONNREFUSED') return { outcome: 'refused', retryable: true };
  if (code !== undefined && RESET_CODES.has(code)) return { outcome: 'reset', retryable: true };
  if (code !== undefined && TIMEOUT_CODES.has(code)) return { outcome: 'timeout', retryable: true };
  return undefined;
}

// The 409s the idempotency package answers while another execution holds
// the key: "not yet", not "no". Read off its own errors, so the two packages
// cannot drift apart.
const KEY_HELD_TYPES = new Set([new InFlightError('', 0).problemType, new LeaseLostError('').problemType]);

function isInFlightAnswer({ headers, body }: AnsweredAttempt): boolean {
  const type = problemType(body);
  return headers?.['retry-after'] !== undefined || (type !== undefined && KEY_HELD_TYPES.has(type));
}

// undici wraps some socket errors, and Node's happy-eyeballs connect throws an
// AggregateError: the code that matters may sit in `cause` or `errors[0]`.
function errorCode(error: unknown, depth = 0): string | undefined {
  if (typeof error !== 'object' || error === null || depth > 3) return undefined;
  const { code, cause, errors } = error as { code?: unknown; cause?: unknown; errors?: unknown };
  if (typeof code === 'string') return code;
  return errorCode(cause, depth + 1) ?? (Array.isArray(errors) ? errorCode(errors[0], depth + 1) : undefined);
}
