import type { CallBudget } from './call-budget';
import type { PlannedWait } from './retry-delay';

/**
 * Why a call does not sleep before another attempt.
 *
 * - `too-long`: the server's `Retry-After` asks for more than
 *   `backoff.maxRetryAfterMs`. The call ends with `RetriesExhaustedError`.
 * - `deadline`: the wait would reach the call's deadline (its own
 *   `deadlineMs` or the inbound one). The call ends with `DeadlineExceededError`.
 */
export type WaitRefusal = 'too-long' | 'deadline';

/**
 * Whether the call may sleep `wait` at `now`; `undefined` when it may.
 *
 * A wait that cannot lead to a useful attempt is never slept: the call ends
 * at once, so the inbound request it serves is answered now, not when the
 * sleep is over. The cap is checked first: a `Retry-After` longer than the
 * client ever honours is refused for that reason whatever time is left, so
 * the same answer always ends the same way; only a wait the client would
 * otherwise take is refused for the deadline.
 */
export function refuseWait(wait: PlannedWait, maxRetryAfterMs: number, budget: CallBudget, now: number): WaitRefusal | undefined {
  if (wait.retryAfter && !(wait.ms <= maxRetryAfterMs)) return 'too-long';
  if (!budget.allows(wait.ms, now)) return 'deadline';
  return undefined;
}
