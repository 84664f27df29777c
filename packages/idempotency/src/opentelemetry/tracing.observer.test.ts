import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { IdempotencyCoordinator } from '../coordinator';
import { hashKey } from '../key-hash';
import { MemoryStore } from '../memory-store';
import { IdempotencyOutcome, type IdempotencyEvent } from '../observer';
import { TracingObserver } from './tracing.observer';

describe('TracingObserver without an SDK', () => {
  it('returns before reading the event: the key is not even hashed', () => {
    const event = {
      outcome: IdempotencyOutcome.Executed,
      service: 'payments',
      operation: 'payments.charge',
      get keyHash(): string {
        throw new Error('read the key hash with no span to write it on');
      },
    } satisfies IdempotencyEvent;
    expect(trace.getActiveSpan()).toBeUndefined();
    expect(() => new TracingObserver().record(event)).not.toThrow();
  });
});

describe('TracingObserver with an SDK', () => {
  const exporter = new InMemorySpanExporter();
  beforeAll(() => {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
  });
  afterAll(() => {
    trace.disable();
    context.disable();
  });

  it("records each decision as a span under its request's span: one executed with its epoch, the duplicate waited", async () => {
    const coordinator = new IdempotencyCoordinator({ service: 'payments', store: new MemoryStore(), observer: new TracingObserver() });
    const tracer = trace.getTracer('test');
    const request = { operation: 'payments.charge', key: 'order-1', fingerprint: 'f' };
    let started!: () => void;
    const executing = new Promise<void>((resolve) => (started = resolve));
    let finish!: () => void;
    const finished = new Promise<void>((resolve) => (finish = resolve));
    const first = tracer.startActiveSpan('first', (span) =>
      coordinator.run(request, async () => (started(), await finished, 'charged')).finally(() => span.end()),
    );
    await executing;
    const second = tracer.startActiveSpan('second', (span) => coordinator.run(request, async () => 'again').finally(() => span.end()));
    finish();
    const [{ epoch }] = await Promise.all([first, second]);

    expect(epoch).toBeGreaterThan(0);
    const spans = exporter.getFinishedSpans();
    const parent = (name: string) => spans.find((span) => span.name === name)?.spanContext().spanId;
    const decisions = spans.filter((span) => span.name.startsWith('idempotency '));
    expect(decisions.map((span) => [span.name, span.parentSpanContext?.spanId, span.attributes])).toEqual([
      [
        'idempotency executed',
        parent('first'),
        {
          'idempotency.outcome': 'executed',
          'idempotency.key_hash': hashKey('order-1'),
          'idempotency.operation': 'payments.charge',
          'idempotency.epoch': epoch, // the fencing epoch the action ran under
        },
      ],
      [
        'idempotency waited',
        parent('second'),
        { 'idempotency.outcome': 'waited', 'idempotency.key_hash': hashKey('order-1'), 'idempotency.operation': 'payments.charge' },
      ],
    ]);
  });
});
