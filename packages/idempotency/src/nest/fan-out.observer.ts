import { Logger } from '@nestjs/common';
import type { IdempotencyEvent, IdempotencyObserver } from '../observer';

/**
 * Hands each coordinator event to every observer. One observer that throws
 * must cost neither the request nor the other observers their event.
 */
export class FanOutObserver implements IdempotencyObserver {
  private readonly logger = new Logger('Idempotency');

  constructor(private readonly observers: readonly IdempotencyObserver[]) {}

  record(event: IdempotencyEvent): void {
    for (const observer of this.observers) this.guard(() => observer.record(event));
  }

  claimLatency(service: string, operation: string, ms: number): void {
    for (const observer of this.observers) this.guard(() => observer.claimLatency?.(service, operation, ms));
  }

  private guard(call: () => void): void {
    try {
      call();
    } catch (error) {
      this.logger.warn(`An idempotency observer threw: ${String(error)}`);
    }
  }
}
