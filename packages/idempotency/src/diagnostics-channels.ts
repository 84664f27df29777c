import { channel, tracingChannel } from 'node:diagnostics_channel';
import type { IdempotencyEvent } from './observer';
import type { ClaimResult } from './store';

/**
 * The `node:diagnostics_channel` channels the coordinator publishes on,
 * always, whatever observers it has: an APM or a test subscribes by name,
 * without OpenTelemetry and without this package's observers. A channel
 * nobody subscribes to costs one `hasSubscribers` check per event.
 *
 * @example
 * import { subscribe } from 'node:diagnostics_channel';
 * subscribe(IdempotencyChannel.Outcome, (message) => {
 *   const { outcome, operation, keyHash } = message as IdempotencyEvent;
 *   if (outcome === 'lease_lost') console.warn(`${operation} lost its lease on ${keyHash}`);
 * });
 *
 * @public
 */
export const IdempotencyChannel = {
  /**
   * A plain channel: every decision of the coordinator (`executed`,
   * `replayed`, `waited`, `rejected_in_flight`, `mismatched`, `released`,
   * `lease_lost`, …), one `IdempotencyEvent` each, the very events an
   * `IdempotencyObserver` gets: the key's keyed hash, never the key, its
   * record key or an answer; `error` as the logs print it: a copy with
   * its name, message, `code` and cause, never the properties a client
   * hangs on it (ioredis's `command`, with the failed command's arguments:
   * the record key, the owner token, the answer being stored).
   */
  Outcome: 'idempotency-chain:outcome',
  /**
   * A `TracingChannel`: each claim's round trip to the store, published
   * as `tracing:idempotency-chain:claim:start`, `:end`, `:asyncStart`,
   * `:asyncEnd` (with `result`) or `:error` (with `error`), one
   * {@link ClaimMessage} object throughout. What an observer's
   * `claimLatency` measures.
   */
  Claim: 'idempotency-chain:claim',
} as const;

/**
 * What {@link IdempotencyChannel.Claim} publishes: which request claims,
 * and on `asyncEnd` what the store answered, without the stored answer or
 * the fingerprint; on `error`, why the claim failed.
 *
 * @public
 */
export interface ClaimMessage {
  /** The coordinator's service. */
  service: string;
  /** The request's operation, e.g. `payments.charge`. */
  operation: string;
  /** The key's keyed hash (`hashKey`), as in the logs and the spans. */
  keyHash: string;
  /** Set on `asyncEnd`: `claimed` (with its epoch), `in_progress` (held by another execution) or `completed` (an answer to replay). */
  result?: { status: ClaimResult['status']; epoch?: number };
  /** Set on `error`: what the store rejected with, copied as on the outcome channel. */
  error?: unknown;
}

const outcomes = channel(IdempotencyChannel.Outcome);
const claims = tracingChannel<unknown, ClaimMessage>(IdempotencyChannel.Claim);

/** Publish `event` on the outcome channel, when anyone listens, its error copied by `publicError`. */
export function publishOutcome(event: IdempotencyEvent): void {
  if (!outcomes.hasSubscribers) return;
  outcomes.publish(event.error === undefined ? event : { ...event, error: publicError(event.error) });
}

/** How deep a chain of causes is copied: deeper ones are cut, a cycle ends. */
const CAUSE_DEPTH = 4;

/**
 * What a subscriber may see of `error`: a new `Error` with its name,
 * message, stack, string or number `code` and cause (copied the same way),
 * and nothing else. A store client's error carries what it was sending
 * (ioredis's `command.args`: the record key, the owner token, the answer
 * being stored); a subscriber is any code in the process, so none of it
 * leaves here.
 */
function publicError(error: unknown, depth = 0): Error {
  if (!(error instanceof Error)) return new Error(typeof error === 'string' ? error : 'A non-Error value was thrown');
  const copy: Error & { code?: string | number } = new Error(error.message);
  copy.name = error.name;
  copy.stack = error.stack;
  const { code } = error as { code?: unknown };
  if (typeof code === 'string' || typeof code === 'number') copy.code = code;
  if (error.cause !== undefined && depth < CAUSE_DEPTH) copy.cause = publicError(error.cause, depth + 1);
  return copy;
}

/** Whether anyone listens to the outcome channel, so a request without observers hashes its key only then. */
export function outcomesHeard(): boolean {
  return outcomes.hasSubscribers;
}

/**
 * Run `claim` traced on the claim channel when anyone listens. The traced
 * result is a summary: a completed claim carries the stored answer, which
 * no subscriber may see.
 */
export function traceClaim(claim: () => Promise<ClaimResult>, message: () => ClaimMessage): Promise<ClaimResult> {
  if (!claims.hasSubscribers) return claim();
  let answer: ClaimResult | undefined;
  let failure: { error: unknown } | undefined;
  return claims
    .tracePromise(async () => {
      try {
        answer = await claim();
      } catch (error) {
        // The subscribers hear of a copy; the caller gets the store's own error.
        failure = { error };
        throw publicError(error);
      }
      return answer.status === 'claimed' ? { status: answer.status, epoch: answer.epoch } : { status: answer.status };
    }, message())
    .then(
      () => answer as ClaimResult,
      (published: unknown) => {
        throw failure ? failure.error : published;
      },
    );
}
