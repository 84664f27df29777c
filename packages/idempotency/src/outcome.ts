/**
 * What a status means, in one table: whether an answer is stored and
 * replayed (final), and whether a caller may retry the same request.
 *
 * | status                      | stored (final) | retried by a client |
 * |-----------------------------|----------------|---------------------|
 * | 1xx, 2xx, 3xx               | yes            | no                  |
 * | 400                         | no             | no                  |
 * | 408, 409, 425, 429          | no             | yes                 |
 * | any other 4xx (402, 422...) | yes            | no                  |
 * | 502, 503, 504               | no             | yes                 |
 * | any other 5xx (500, 501...) | no             | no                  |
 *
 * Stored: successes, and client errors the same request would get again.
 * Released: server errors and the 4xx that mean "not now" - a retry of those
 * must run again, not replay the failure. 400 is released too: it means the
 * request was refused as malformed before anything happened (DTO validation
 * runs after the claim), and the caller must be able to correct it and
 * reuse its key. Retried: only answers that say "the same request may
 * succeed later" - a 500 is an answer, not an unknown outcome.
 *
 * @public
 */
export interface StatusOutcome {
  /** Stored and replayed; otherwise the key is released for the next attempt. */
  final: boolean;
  /** Worth sending again, with the same key. */
  retryable: boolean;
}

const NOT_NOW = new Set([408, 409, 425, 429]);
const UNAVAILABLE = new Set([502, 503, 504]);

/**
 * The row of the table above for `status`.
 *
 * @public
 */
export function statusOutcome(status: number): StatusOutcome {
  if (status < 400) return { final: true, retryable: false };
  if (NOT_NOW.has(status) || UNAVAILABLE.has(status)) return { final: false, retryable: true };
  return { final: status !== 400 && status < 500, retryable: false };
}

/** A result that carries an HTTP-like status code. */
interface StatusBearing {
  statusCode: number;
}

/**
 * Decides whether a result is stored (`true`) or its key released (`false`).
 *
 * @public
 */
export type OutcomeRule<T = unknown> = (result: T) => boolean;

/**
 * The default outcome rule: a result with a numeric `statusCode` is final
 * when {@link statusOutcome} says so; a plain value (what a handler or a
 * message consumer returns) is final. A thrown error is never final:
 * nothing reached an answer.
 *
 * @public
 */
export const isFinalOutcome: OutcomeRule = (result) => {
  const status = (result as Partial<StatusBearing> | null | undefined)?.statusCode;
  return typeof status !== 'number' || statusOutcome(status).final;
};
