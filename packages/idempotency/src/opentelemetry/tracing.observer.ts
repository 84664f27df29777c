import { trace, type Tracer } from '@opentelemetry/api';
import type { IdempotencyEvent, IdempotencyObserver } from '../observer';
import { IdempotencyAttribute } from './attributes';

/** The instrumentation scope of the spans this package makes. */
const SCOPE = '@idempotency-chain/idempotency';

/**
 * Records each decision of the coordinator as a small span of its own,
 * `idempotency <outcome>` (`idempotency executed`, `idempotency waited`...),
 * a child of the request's active span, with the outcome, the key's hash,
 * the operation and the epoch as attributes: a trace shows which hop
 * executed and which waited or replayed. A span of its own rather than
 * attributes on the active one: a decision such as `executed` is reported
 * when the result is stored, after the handler's own span has ended.
 *
 * Through `@opentelemetry/api` only. Without an SDK, or outside a traced
 * request, there is no active span and `record` returns before touching the
 * event: no allocation, and the key is not even hashed.
 *
 * @example
 * IdempotencyModule.forRoot({ service: 'payments', store, observers: [new TracingObserver()] });
 *
 * @public
 */
export class TracingObserver implements IdempotencyObserver {
  // A proxy until an SDK registers, then its tracer: safe to create before the SDK starts.
  private readonly tracer: Tracer = trace.getTracer(SCOPE);

  /** Records the event as a short child span of the active span, with its attributes; nothing when no span is active. */
  record(event: IdempotencyEvent): void {
    if (trace.getActiveSpan() === undefined) return;
    const attributes = {
      [IdempotencyAttribute.Outcome]: event.outcome,
      [IdempotencyAttribute.KeyHash]: event.keyHash,
      [IdempotencyAttribute.Operation]: event.operation,
      ...(event.epoch !== undefined && { [IdempotencyAttribute.Epoch]: event.epoch }),
    };
    this.tracer.startSpan(`idempotency ${event.outcome}`, { attributes }).end();
  }
}
