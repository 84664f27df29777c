import { IdempotencyCoordinator } from './coordinator';
import { hashKey } from './key-hash';
import { LoggingObserver, type StructuredLogger } from './logging.observer';
import { MemoryStore } from './memory-store';
import { IdempotencyOutcome } from './observer';

describe('LoggingObserver', () => {
  const lines: Array<{ level: string; fields: Record<string, unknown>; message: string }> = [];
  const logger: StructuredLogger = {
    info: (fields, message) => lines.push({ level: 'info', fields, message }),
    warn: (fields, message) => lines.push({ level: 'warn', fields, message }),
  };
  const observer = new LoggingObserver(logger);
  beforeEach(() => (lines.length = 0));

  it('writes one structured line per decision, with the key hash and the epoch', () => {
    observer.record({
      outcome: IdempotencyOutcome.Executed,
      service: 'payments',
      operation: 'payments.charge',
      keyHash: 'a1b2c3d4e5f6',
      epoch: 7,
    });
    expect(lines).toEqual([
      {
        level: 'info',
        message: 'idempotency executed',
        fields: {
          event: 'idempotency',
          outcome: 'executed',
          service: 'payments',
          operation: 'payments.charge',
          keyHash: 'a1b2c3d4e5f6',
          epoch: 7,
        },
      },
    ]);
  });

  it('warns of the failures an operator must see, with the error as text', () => {
    observer.record({
      outcome: IdempotencyOutcome.StoreError,
      service: 's',
      operation: 'o',
      keyHash: 'k',
      error: new Error('ECONNREFUSED'),
    });
    observer.record({ outcome: IdempotencyOutcome.LeaseLost, service: 's', operation: 'o', keyHash: 'k', epoch: 3 });
    observer.record({
      outcome: IdempotencyOutcome.IsFinalThrew,
      service: 's',
      operation: 'o',
      keyHash: 'k',
      epoch: 4,
      error: new Error('isFinal bug'),
    });
    expect(lines.map((line) => [line.level, line.fields.outcome, line.fields.error])).toEqual([
      ['warn', 'store_error', 'Error: ECONNREFUSED'],
      ['warn', 'lease_lost', undefined],
      ['warn', 'is_final_threw', 'Error: isFinal bug'],
    ]);
  });

  it('logs a real decision with the keyed key hash, and nothing a guessed key can be checked against without the secret', async () => {
    const coordinator = new IdempotencyCoordinator({ service: 'payments', store: new MemoryStore(), observer: observer });
    const key = 'order-100042'; // guessable, like an order number
    await coordinator.run({ operation: 'payments.charge', scope: 'tenant:acme', key, fingerprint: 'fp' }, async () => ({
      statusCode: 201,
    }));
    expect(lines.map((line) => line.fields)).toEqual([
      {
        event: 'idempotency',
        outcome: 'executed',
        service: 'payments',
        operation: 'payments.charge',
        keyHash: hashKey(key),
        epoch: expect.any(Number),
      },
    ]);
    const logged = JSON.stringify(lines);
    expect(logged).not.toContain(key);
    // The record key is an unkeyed SHA-256 of the identity: a log line holding it would let anyone try every order number.
    expect(logged).not.toContain(coordinator.recordKey('payments.charge', 'tenant:acme', key));
  });
});
