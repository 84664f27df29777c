import type { CallLimit } from './errors';

/**
 * The time one call may spend, across all its attempts and waits.
 *
 * The deadline is the sooner of the client's own budget (`deadlineMs` from the
 * start of the call) and the inbound deadline bound by the caller's request:
 * a downstream call that outlives the caller's patience only produces a
 * result nobody reads, and a duplicate when the caller retries.
 */
export class CallBudget {
  private constructor(
    /** Epoch ms, or undefined when no deadline applies. */
    readonly deadline: number | undefined,
    /** Which limit the deadline comes from. */
    readonly limit: Extract<CallLimit, 'deadline' | 'inbound-deadline'> | undefined,
  ) {}

  /** Start the budget of a call at `now`. */
  static start(now: number, deadlineMs?: number, inboundDeadline?: number): CallBudget {
    const own = deadlineMs === undefined ? undefined : now + deadlineMs;
    if (inboundDeadline !== undefined && (own === undefined || inboundDeadline < own)) {
      return new CallBudget(inboundDeadline, 'inbound-deadline');
    }
    return new CallBudget(own, own === undefined ? undefined : 'deadline');
  }

  /** Milliseconds left; `Infinity` when no deadline applies. */
  remaining(now: number): number {
    return this.deadline === undefined ? Infinity : Math.max(0, this.deadline - now);
  }

  /**
   * The timeout of an attempt starting at `now`: the per-attempt timeout,
   * clipped to what is left. `byDeadline` says the clip applied, so an expiry
   * is reported as the deadline ending the call rather than as a timeout.
   */
  attemptTimeout(attemptTimeoutMs: number, now: number): { ms: number; byDeadline: boolean } {
    const left = this.remaining(now);
    return left <= attemptTimeoutMs ? { ms: left, byDeadline: true } : { ms: attemptTimeoutMs, byDeadline: false };
  }

  /** Whether a wait of `delayMs` from `now` still leaves time for an attempt. */
  allows(delayMs: number, now: number): boolean {
    return now + delayMs < (this.deadline ?? Infinity);
  }
}
