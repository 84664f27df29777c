import type { AttemptOutcome } from './attempt-event';

// RFC 9110 §9.2.2: the methods whose intended effect is the same however
// often they are sent, which a client may retry after a lost reply.
const IDEMPOTENT_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE', 'PUT', 'DELETE']);

/**
 * Whether an attempt whose outcome the retry rule calls unknown may be sent
 * again. Without an `Idempotency-Key` the server cannot tell the retry from
 * a new request, so a method that is not idempotent (POST, PATCH, or any
 * other) would run twice:
 *
 * | method                                     | key sent | retried after an unknown outcome |
 * |--------------------------------------------|----------|----------------------------------|
 * | GET, HEAD, OPTIONS, TRACE, PUT, DELETE     | any      | yes                              |
 * | POST, PATCH, any other                     | yes      | yes                              |
 * | POST, PATCH, any other                     | no       | only a refused connection (the request never left), unless `retryUnkeyed` |
 *
 * A 408, 425, 429 or 503 is not retried either without a key: whether the
 * server did nothing is its word, not the client's knowledge.
 */
export function mayRetryWithoutKey(method: string, outcome: AttemptOutcome, retryUnkeyed: boolean): boolean {
  return retryUnkeyed || outcome === 'refused' || IDEMPOTENT_METHODS.has(method.toUpperCase());
}
