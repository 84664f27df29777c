import type { IdempotencyEvent, IdempotencyObserver } from '../observer';

/**
 * An observer that keeps every event, plus the test's own marks, in one
 * ordered log: ordering assertions read "this happened before that" off it
 * instead of comparing clocks.
 */
export class Recorder implements IdempotencyObserver {
  readonly events: IdempotencyEvent[] = [];
  /** Observer outcomes as `observer:<outcome>`, interleaved with `mark()` labels. */
  readonly log: string[] = [];
  readonly latencies: Array<{ service: string; operation: string; ms: number }> = [];

  record(event: IdempotencyEvent): void {
    this.events.push(event);
    this.log.push(`observer:${event.outcome}`);
  }

  claimLatency(service: string, operation: string, ms: number): void {
    this.latencies.push({ service, operation, ms });
  }

  /** Claims answered so far (one per claim round trip). */
  get claims(): number {
    return this.latencies.length;
  }

  mark(label: string): void {
    this.log.push(label);
  }

  outcomes(): string[] {
    return this.events.map((event) => event.outcome);
  }

  count(outcome: string): number {
    return this.events.filter((event) => event.outcome === outcome).length;
  }

  /** Positions of `label` in the log. */
  positions(label: string): number[] {
    return this.log.flatMap((entry, index) => (entry === label ? [index] : []));
  }
}
