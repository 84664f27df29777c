/**
 * Header names shared by every hop, in the lower case Node uses.
 *
 * @public
 */
export const HeaderName = {
  /** The key of the intent (IETF draft `Idempotency-Key`). */
  IdempotencyKey: 'idempotency-key',
  /** Set to `true` on a response answered from the store. */
  Replayed: 'idempotent-replayed',
  /** Milliseconds the caller will still wait for this response. */
  RequestTimeout: 'request-timeout-ms',
  /** 1-based number of this attempt within the caller's retry loop. */
  RequestAttempt: 'request-attempt',
} as const;
