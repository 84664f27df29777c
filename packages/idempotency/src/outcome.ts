/**
 * Which results are stored and replayed, and which release the key.
 *
 * Stored (final): successes, and client errors the same request would get
 * again. Released (transient): server errors and the 4xx that mean "not now"
 * (408 timeout, 409 conflict, 425 too early, 429 too many) - a retry of
 * those must run again, not replay the failure. A thrown error is always
 * transient: nothing reached a final answer.
 *
 * 400 is released too: it means the request was refused as malformed before
 * anything happened (DTO validation runs inside the handler pipeline, after
 * the claim), and the caller must be able to correct it and reuse its key.
 */
const NOT_YET = new Set([400, 408, 409, 425, 429]);

/** A result that carries an HTTP-like status code. */
export interface StatusBearing {
  statusCode: number;
}

/** Decides whether a result is stored (`true`) or its key released (`false`). */
export type OutcomeRule<T = unknown> = (result: T) => boolean;

/**
 * The default outcome rule. Results without a numeric `statusCode` (plain
 * values returned by a handler or a message consumer) are final.
 */
export const isFinalOutcome: OutcomeRule = (result) => {
  const status = (result as Partial<StatusBearing> | null | undefined)?.statusCode;
  if (typeof status !== 'number') return true;
  if (status >= 500) return false;
  return !NOT_YET.has(status);
};
