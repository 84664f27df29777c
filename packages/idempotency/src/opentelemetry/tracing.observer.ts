import { trace } from '@opentelemetry/api';
import type { IdempotencyEvent, IdempotencyObserver } from '../observer';
import { IdempotencyAttribute } from './attributes';

/**
 * Writes each decision of the coordinator on the active span, through
 * `@opentelemetry/api` only: the outcome, the key's hash, the operation and
 * the epoch as attributes (the last decision wins), and one span event per
 * decision (`idempotency executed`), so a trace shows which hop executed and
 * which waited or replayed.
 *
 * Without an SDK, or outside a traced request, there is no active span and
 * `record` returns before touching the event: no allocation, and the key is
 * not even hashed.
 *
 * @example
 * IdempotencyModule.forRoot({ service: 'payments', store, observers: [new TracingObserver()] });
 */
export class TracingObserver implements IdempotencyObserver {
  record(event: IdempotencyEvent): void {
    const span = trace.getActiveSpan();
    if (span === undefined || !span.isRecording()) return;
    const attributes = {
      [IdempotencyAttribute.Outcome]: event.outcome,
      [IdempotencyAttribute.KeyHash]: event.keyHash,
      [IdempotencyAttribute.Operation]: event.operation,
      ...(event.epoch !== undefined && { [IdempotencyAttribute.Epoch]: event.epoch }),
    };
    span.setAttributes(attributes);
    span.addEvent(`idempotency ${event.outcome}`, attributes);
  }
}
