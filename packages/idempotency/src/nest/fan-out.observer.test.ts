import { Logger, type LoggerService } from '@nestjs/common';
import { Registry } from 'prom-client';
import { IdempotencyCoordinator } from '../coordinator';
import { hashKey } from '../key-hash';
import { MemoryStore } from '../memory-store';
import { IdempotencyOutcome } from '../observer';
import { readsRoutineKeyHash, ROUTINE_OUTCOMES } from '../routine-outcomes';
import { FanOutObserver, LOGGED } from './fan-out.observer';
import { IdempotencyMetrics } from './idempotency.metrics';

describe('FanOutObserver warning line', () => {
  const warnings: string[] = [];
  const capture: LoggerService = {
    log: () => undefined,
    error: () => undefined,
    warn: (message: unknown) => warnings.push(String(message)),
  };
  beforeAll(() => Logger.overrideLogger(capture));
  afterAll(() => Logger.overrideLogger(new Logger()));

  it('names the key by its keyed hash, never by the record key (an unkeyed hash of a guessable key)', () => {
    const key = 'order-100042';
    const recordKey = new IdempotencyCoordinator({ service: 'payments', store: new MemoryStore() }).recordKey('payments.charge', '', key);
    new FanOutObserver([]).record({
      outcome: IdempotencyOutcome.LeaseLost,
      service: 'payments',
      operation: 'payments.charge',
      keyHash: hashKey(key),
      epoch: 9,
    });
    expect(warnings).toEqual([`payments payments.charge key ${hashKey(key)} epoch 9: lease_lost`]);
    expect(warnings.join('\n')).not.toContain(recordKey);
  });
});

describe('FanOutObserver and the key hashes of routine events', () => {
  const metrics = new IdempotencyMetrics({ registry: new Registry() });

  it('reads none when its observers read none (the metrics alone), and some as soon as one does', () => {
    expect(readsRoutineKeyHash(metrics)).toBe(false);
    expect(readsRoutineKeyHash(new FanOutObserver([metrics]))).toBe(false);
    expect(readsRoutineKeyHash(new FanOutObserver([metrics, { record: () => undefined }]))).toBe(true);
  });

  it('reads them for a subclass of the metrics with a record of its own', () => {
    class AuditedMetrics extends IdempotencyMetrics {
      override record(event: Parameters<IdempotencyMetrics['record']>[0]): void {
        super.record(event);
      }
    }
    expect(readsRoutineKeyHash(new AuditedMetrics({ registry: new Registry() }))).toBe(true);
    expect(readsRoutineKeyHash(new FanOutObserver([new AuditedMetrics({ registry: new Registry() })]))).toBe(true);
  });

  it('logs no routine outcome: every event it logs carries its key hash', () => {
    expect([...LOGGED].filter((outcome) => ROUTINE_OUTCOMES.has(outcome as never))).toEqual([]);
  });
});
