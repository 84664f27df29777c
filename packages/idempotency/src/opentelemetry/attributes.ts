/**
 * Span attribute names this package writes, in the `idempotency.*`
 * namespace (no OpenTelemetry semantic convention covers idempotency).
 * Never the raw key: `key_hash` is the hash the logs carry too.
 *
 * @public
 */
export const IdempotencyAttribute = {
  /** The last decision for this request: `executed`, `replayed`, `waited`, `rejected_in_flight`, ... */
  Outcome: 'idempotency.outcome',
  /** First 12 hex digits of SHA-256(key), as in the logs: the same on every hop of one intent. */
  KeyHash: 'idempotency.key_hash',
  /** The operation the record belongs to, e.g. `payments.charge`. */
  Operation: 'idempotency.operation',
  /** The fencing epoch of the execution, when there is one. */
  Epoch: 'idempotency.epoch',
  /**
   * On a client span: the 1-based attempt of the call (`request-attempt`),
   * next to the semantic conventions' `http.request.resend_count` (attempt - 1, on resends).
   */
  Attempt: 'idempotency.attempt',
} as const;
/**
 * One of the {@link IdempotencyAttribute} names.
 *
 * @public
 */
export type IdempotencyAttribute = (typeof IdempotencyAttribute)[keyof typeof IdempotencyAttribute];
