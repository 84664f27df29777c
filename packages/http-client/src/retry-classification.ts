import { statusOutcome } from '@idempotency-chain/idempotency';
import type { AttemptOutcome } from './attempt-event';
import { AttemptTimedOut } from './attempt';

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
 * | attempt ended with                               | outcome      | retried |
 * |--------------------------------------------------|--------------|---------|
 * | 1xx-3xx                                          | `ok`         | no      |
 * | 408, 409, 425, 429, 502, 503, 504                | `http-error` | yes (honouring `Retry-After`) |
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
 */
export function classifyAttempt(ended: { status: number } | { error: unknown }): AttemptClassification | undefined {
  if ('status' in ended) {
    return ended.status < 400
      ? { outcome: 'ok', retryable: false }
      : { outcome: 'http-error', retryable: statusOutcome(ended.status).retryable };
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

// undici wraps some socket errors, and Node's happy-eyeballs connect throws an
// AggregateError: the code that matters may sit in `cause` or `errors[0]`.
function errorCode(error: unknown, depth = 0): string | undefined {
  if (typeof error !== 'object' || error === null || depth > 3) return undefined;
  const { code, cause, errors } = error as { code?: unknown; cause?: unknown; errors?: unknown };
  if (typeof code === 'string') return code;
  return errorCode(cause, depth + 1) ?? (Array.isArray(errors) ? errorCode(errors[0], depth + 1) : undefined);
}
