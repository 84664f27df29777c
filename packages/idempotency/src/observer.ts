/**
 * What the coordinator reports, one event per decision, so metrics and logs
 * can be attached without the core knowing about either.
 *
 * @public
 */
export const IdempotencyOutcome = {
  /** The action ran and its result was stored. */
  Executed: 'executed',
  /** A stored result was returned without running the action. */
  Replayed: 'replayed',
  /** This request waited for another execution, then was answered by it. */
  Waited: 'waited',
  /** Answered 409 because another execution holds the key. */
  RejectedInFlight: 'rejected_in_flight',
  /** This request was waiting for another execution when its caller went away: it got no answer. */
  Abandoned: 'abandoned',
  /** The key was used with another fingerprint: 422. */
  Mismatched: 'mismatched',
  /** The action failed transiently; the key was released for a retry. */
  Released: 'released',
  /** The heartbeat found another owner: this execution lost its lease. */
  LeaseLost: 'lease_lost',
  /** The store refused a completion from an owner that lost its lease. */
  StaleCompletionRefused: 'stale_completion_refused',
  /**
   * The action ran, but its result could not be stored as it was (not
   * serialisable, too large, or lost after the handler): an error answer was
   * stored in its place, so a retry never runs the action again.
   */
  Unstorable: 'unstorable',
  /**
   * The action ran, but its result could not be stored: every completion
   * retry failed until the lease it held ran out. The caller got its
   * answer, and this process replays it; elsewhere a retry finds the key
   * held until the lease ends, and after that may run the action again,
   * which only a resource fenced on the record refuses. Alert on it.
   */
  CompletionFailed: 'completion_failed',
  /**
   * The policy's `isFinal` threw on a result: it was stored as it went out,
   * as a final one would be (for a payment, a replay is the safe side).
   */
  IsFinalThrew: 'is_final_threw',
  /**
   * A completed record's answer could not be read (it does not decrypt, or
   * is in clear where only encrypted answers are accepted), or the store
   * holds the record in a format version this library does not read
   * (`RecordVersionError`): the request got a 500, neither a replay nor a
   * second execution. The event's `error` says why. Alert on it: a
   * replica without the newest key, a record written by another release,
   * or a store written by someone else.
   */
  Unreadable: 'unreadable',
  /** A store call failed. */
  StoreError: 'store_error',
  /** The store failed and the operation opted into running unprotected. */
  FailOpen: 'fail_open',
} as const;
/**
 * One of the {@link IdempotencyOutcome} values.
 *
 * @public
 */
export type IdempotencyOutcome = (typeof IdempotencyOutcome)[keyof typeof IdempotencyOutcome];

/**
 * One decision of the coordinator.
 *
 * @public
 */
export interface IdempotencyEvent {
  outcome: IdempotencyOutcome;
  service: string;
  operation: string;
  /**
   * First 12 hex digits of a keyed HMAC-SHA-256 of the key (`hashKey`):
   * never the raw key, nor anything a guessed key can be checked against
   * without the secret. It correlates one key's lines; with `service`,
   * `operation` and the key from the support ticket, the
   * `idempotency-records` CLI finds the record and checks, with
   * `--key-hash`, that it is this line's.
   */
  keyHash: string;
  /** Fencing epoch of the execution this event is about, when there is one. */
  epoch?: number;
  /** The error behind a `store_error`, an `unstorable`, an `is_final_threw` or an `unreadable`. */
  error?: unknown;
}

/**
 * Receives the coordinator's events. Must not throw; should not block.
 *
 * @public
 */
export interface IdempotencyObserver {
  /** Called once per decision the coordinator takes (executed, replayed, waited, rejected...). */
  record(event: IdempotencyEvent): void;
  /** Time one claim round trip took, in milliseconds. */
  claimLatency?(service: string, operation: string, ms: number): void;
}
