import { Counter, Histogram, register, type Registry } from 'prom-client';
import type { IdempotencyEvent, IdempotencyObserver } from '../observer';
import { ROUTINE_KEY_HASH_UNREAD } from '../routine-outcomes';

const EVENTS = 'idempotency_events_total';
const CLAIM_DURATION = 'idempotency_claim_duration_seconds';

/**
 * Prometheus metrics of the coordinator's decisions:
 * `idempotency_events_total{service,operation,outcome}` (one per
 * `IdempotencyOutcome`) and `idempotency_claim_duration_seconds{service,operation}`.
 *
 * Metrics already present in the registry are reused, so two apps booted in
 * one process (tests) share them instead of failing on duplicate registration.
 *
 * @example
 * const metrics = new IdempotencyMetrics({ registry });
 * const idempotency = new IdempotencyCoordinator({ service: 'payments', store, observer: metrics });
 *
 * @public
 */
export class IdempotencyMetrics implements IdempotencyObserver {
  /** Where the metrics live: scrape this one. */
  readonly registry: Registry;
  private readonly events: Counter<'service' | 'operation' | 'outcome'>;
  private readonly claimDuration: Histogram<'service' | 'operation'>;

  constructor(options: { registry?: Registry } = {}) {
    const registry = options.registry ?? register;
    this.registry = registry;
    this.events =
      (registry.getSingleMetric(EVENTS) as Counter<'service' | 'operation' | 'outcome'> | undefined) ??
      new Counter({
        name: EVENTS,
        help: 'Idempotency decisions, by outcome (executed, replayed, waited, rejected_in_flight, unstorable, is_final_threw, ...)',
        labelNames: ['service', 'operation', 'outcome'],
        registers: [registry],
      });
    this.claimDuration =
      (registry.getSingleMetric(CLAIM_DURATION) as Histogram<'service' | 'operation'> | undefined) ??
      new Histogram({
        name: CLAIM_DURATION,
        help: 'Time one claim round trip to the idempotency store took',
        labelNames: ['service', 'operation'],
        // A memory claim is microseconds, a Redis one about a millisecond; a slow store is the signal.
        buckets: [0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
        registers: [registry],
      });
  }

  /** Counts the event under its service, operation and outcome. */
  record(event: IdempotencyEvent): void {
    this.events.inc({ service: event.service, operation: event.operation, outcome: event.outcome });
  }

  /**
   * @internal Its `record` counts outcomes and never reads a key's hash, so
   * no key is hashed for it; a subclass with a `record` of its own may read
   * it, and gets every event hashed.
   */
  get [ROUTINE_KEY_HASH_UNREAD](): boolean {
    return this.record === IdempotencyMetrics.prototype.record;
  }

  claimLatency(service: string, operation: string, ms: number): void {
    this.claimDuration.observe({ service, operation }, ms / 1000);
  }
}
