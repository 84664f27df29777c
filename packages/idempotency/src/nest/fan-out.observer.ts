import { Logger } from '@nestjs/common';
import { IdempotencyOutcome, type IdempotencyEvent, type IdempotencyObserver } from '../observer';
import { readsRoutineKeyHash, ROUTINE_KEY_HASH_UNREAD } from '../routine-outcomes';

/** The outcomes logged as warnings whatever the observers: none is routine, so each event logged carries its key's hash. */
export const LOGGED: ReadonlySet<string> = new Set([
  IdempotencyOutcome.Unstorable,
  IdempotencyOutcome.LeaseLost,
  IdempotencyOutcome.IsFinalThrew,
  IdempotencyOutcome.Unreadable,
]);

/**
 * Hands each coordinator event to every observer. One observer that throws
 * must cost neither the request nor the other observers their event. The
 * events an operator must hear of even without a logging observer - a
 * result stored as an error, a lost lease, an `isFinal` that threw, an
 * answer that cannot be read - are also logged as warnings.
 */
export class FanOutObserver implements IdempotencyObserver {
  private readonly logger = new Logger('Idempotency');
  /** @internal A routine event's key hash is unread when every observer leaves it unread. */
  readonly [ROUTINE_KEY_HASH_UNREAD]: boolean;

  constructor(private readonly observers: readonly IdempotencyObserver[]) {
    this[ROUTINE_KEY_HASH_UNREAD] = !observers.some(readsRoutineKeyHash);
  }

  record(event: IdempotencyEvent): void {
    for (const observer of this.observers) {
      try {
        observer.record(event);
      } catch (error) {
        this.threw(error);
      }
    }
    if (LOGGED.has(event.outcome)) {
      const reason = event.error instanceof Error ? `: ${event.error.message}` : '';
      this.logger.warn(`${event.service} ${event.operation} key ${event.keyHash} epoch ${event.epoch ?? 0}: ${event.outcome}${reason}`);
    }
  }

  claimLatency(service: string, operation: string, ms: number): void {
    for (const observer of this.observers) {
      try {
        observer.claimLatency?.(service, operation, ms);
      } catch (error) {
        this.threw(error);
      }
    }
  }

  // Each call is guarded in its own loop, with no closure: this runs on every request.
  private threw(error: unknown): void {
    this.logger.warn(`An idempotency observer threw: ${String(error)}`);
  }
}
