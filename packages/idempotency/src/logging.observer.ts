import { IdempotencyOutcome, type IdempotencyEvent, type IdempotencyObserver } from './observer';

/**
 * A structured logger that takes its fields first and its message second:
 * pino's signature, and `PinoLogger`'s from nestjs-pino.
 *
 * @public
 */
export interface StructuredLogger {
  /** Logs an event that went as it should: an execution, a replay, a wait. */
  info(fields: Record<string, unknown>, message: string): void;
  /** Logs an event an operator may act on: a store error, a lost lease, an answer not stored. */
  warn(fields: Record<string, unknown>, message: string): void;
}

/** Outcomes an operator must notice: the store failed, an execution lost the key, a result or a rule went wrong. */
const WARNINGS: ReadonlySet<IdempotencyOutcome> = new Set([
  IdempotencyOutcome.StoreError,
  IdempotencyOutcome.FailOpen,
  IdempotencyOutcome.LeaseLost,
  IdempotencyOutcome.StaleCompletionRefused,
  IdempotencyOutcome.Unstorable,
  IdempotencyOutcome.CompletionFailed,
  IdempotencyOutcome.IsFinalThrew,
  IdempotencyOutcome.Unreadable,
]);

/**
 * Logs every decision of the coordinator as one structured line,
 * `{ event: 'idempotency', outcome, service, operation, keyHash, epoch }`:
 * the key's keyed hash (`hashKey`), never the key, an unkeyed hash of it
 * (the record key) or a body, so the lines can be kept and
 * shipped like any other log. Failures are warnings, the rest information.
 *
 * @example
 * IdempotencyModule.forRootAsync({
 *   inject: [PinoLogger],
 *   useFactory: (logger: PinoLogger) => ({ service: 'payments', store, observers: [new LoggingObserver(logger)] }),
 * });
 *
 * @public
 */
export class LoggingObserver implements IdempotencyObserver {
  constructor(private readonly logger: StructuredLogger) {}

  /** Logs the event as one line of fields, `warn` for the outcomes an operator may act on. */
  record({ error, ...event }: IdempotencyEvent): void {
    const fields = { event: 'idempotency', ...event, ...(error !== undefined && { error: String(error) }) };
    if (WARNINGS.has(event.outcome)) this.logger.warn(fields, `idempotency ${event.outcome}`);
    else this.logger.info(fields, `idempotency ${event.outcome}`);
  }
}
