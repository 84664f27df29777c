import {
  DelegateBackoff,
  ExponentialBackoff,
  decorrelatedJitterGenerator,
  type IBackoff,
  type IBackoffFactory,
  type IRetryBackoffContext,
} from 'cockatiel';
import type { AttemptResult } from './attempt';
import { parseRetryAfter } from './retry-after';
import { timerMs } from './timer-limit';

/**
 * The wait between attempts: capped, jittered exponential backoff, or the
 * server's `Retry-After` up to a bound. Every value is a positive, finite
 * number of ms no longer than Node's longest timer (2^31-1 ms).
 *
 * @public
 */
export interface BackoffOptions {
  /** Scale of the first wait, in ms (default 100). */
  initialMs?: number;
  /** No computed backoff is longer than this, in ms (default 2000). */
  maxMs?: number;
  /**
   * The longest `Retry-After` the client honours, in ms (default 30 000). A
   * server that asks for more ends the call at once with
   * `RetriesExhaustedError`: the caller's own request is held for as long as
   * the client sleeps, and nobody upstream waits that long.
   */
  maxRetryAfterMs?: number;
}

/**
 * Defaults. 30 s of `Retry-After` covers an in-flight lease of a few seconds
 * (the 409 says when it ends) with room to spare, and is about as long as an
 * upstream caller waits: a longer sleep holds the inbound request, its socket
 * and memory for an answer nobody is likely to read.
 */
const BACKOFF_DEFAULTS: Readonly<Required<BackoffOptions>> = Object.freeze({
  initialMs: 100,
  maxMs: 2000,
  maxRetryAfterMs: 30_000,
});

/**
 * The backoff a client uses, defaults applied and every value checked, copied
 * so that mutating the caller's object later changes nothing.
 *
 * @throws RangeError naming the option (`backoff.maxMs`...) that is out of range.
 */
export function resolveBackoff(options: BackoffOptions = {}): Readonly<Required<BackoffOptions>> {
  return Object.freeze({
    initialMs: timerMs('backoff.initialMs', options.initialMs ?? BACKOFF_DEFAULTS.initialMs),
    maxMs: timerMs('backoff.maxMs', options.maxMs ?? BACKOFF_DEFAULTS.maxMs),
    maxRetryAfterMs: timerMs('backoff.maxRetryAfterMs', options.maxRetryAfterMs ?? BACKOFF_DEFAULTS.maxRetryAfterMs),
  });
}

/** The wait chosen before the next attempt, and whether the server asked for it. */
export interface PlannedWait {
  ms: number;
  /** From the response's `Retry-After`, unbounded; otherwise the backoff, at most `maxMs`. */
  retryAfter: boolean;
}

/**
 * The wait before the next attempt, as a cockatiel backoff.
 *
 * A retryable response that says `Retry-After` is taken at its word: the
 * server knows when the in-flight execution will be done, the backoff only
 * guesses. Otherwise cockatiel's decorrelated-jitter exponential backoff,
 * capped at `maxMs`, so a fleet of clients does not retry in lockstep.
 *
 * `beforeWait` sees each planned wait before cockatiel sleeps; it ends the
 * call by throwing when the wait is not to be slept (see `refuseWait`).
 */
export function retryDelay(
  options: Required<BackoffOptions>,
  beforeWait: (wait: PlannedWait) => void,
): IBackoffFactory<IRetryBackoffContext<unknown>> {
  const exponential = new ExponentialBackoff({
    initialDelay: options.initialMs,
    maxDelay: options.maxMs,
    generator: decorrelatedJitterGenerator,
  });
  return new DelegateBackoff<IRetryBackoffContext<unknown>, IBackoff<unknown>>((context, previous) => {
    const step = previous ? previous.next(undefined) : exponential.next();
    const retryAfter = retryAfterOf(context.result);
    const wait = { ms: Math.round(retryAfter ?? step.duration), retryAfter: retryAfter !== undefined };
    beforeWait(wait);
    return { delay: wait.ms, state: step };
  });
}

function retryAfterOf(result: IRetryBackoffContext<unknown>['result']): number | undefined {
  if (!('value' in result)) return undefined;
  const { response } = result.value as AttemptResult;
  return parseRetryAfter(response.headers['retry-after'], Date.now());
}
