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

/** Capped, jittered exponential backoff between attempts. */
export interface BackoffOptions {
  /** Scale of the first wait, in ms (default 100). */
  initialMs?: number;
  /** No wait is longer than this, in ms (default 2000). */
  maxMs?: number;
}

/**
 * The wait before the next attempt, as a cockatiel backoff.
 *
 * A retryable response that says `Retry-After` is taken at its word: the
 * server knows when the in-flight execution will be done, the backoff only
 * guesses. Otherwise cockatiel's decorrelated-jitter exponential backoff,
 * capped at `maxMs`, so a fleet of clients does not retry in lockstep.
 *
 * `beforeWait` sees each chosen wait before cockatiel sleeps; it may end the
 * call by throwing (the call's deadline would pass during the wait).
 */
export function retryDelay(
  options: BackoffOptions,
  beforeWait: (waitMs: number) => void,
): IBackoffFactory<IRetryBackoffContext<unknown>> {
  const exponential = new ExponentialBackoff({
    initialDelay: options.initialMs ?? 100,
    maxDelay: options.maxMs ?? 2000,
    generator: decorrelatedJitterGenerator,
  });
  return new DelegateBackoff<IRetryBackoffContext<unknown>, IBackoff<unknown>>((context, previous) => {
    const step = previous ? previous.next(undefined) : exponential.next();
    const wait = Math.round(retryAfterOf(context.result) ?? step.duration);
    beforeWait(wait);
    return { delay: wait, state: step };
  });
}

function retryAfterOf(result: IRetryBackoffContext<unknown>['result']): number | undefined {
  if (!('value' in result)) return undefined;
  const { response } = result.value as AttemptResult;
  return parseRetryAfter(response.headers['retry-after'], Date.now());
}
