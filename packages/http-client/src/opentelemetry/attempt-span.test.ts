import { hashKey } from '@idempotency-chain/idempotency';
import { context, propagation, SpanKind, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { reply, startClient, type ClientUnderTest } from '../fault-server.test-support';
import { attemptSpanAttributes } from './attempt-span';

// The real undici instrumentation (diagnostics channels) around the client's own
// dispatcher, a real server that loses the first reply and refuses the second.
describe('attemptSpanAttributes with the undici instrumentation', () => {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const instrumentation = new UndiciInstrumentation({ startSpanHook: attemptSpanAttributes });
  let under: ClientUnderTest;

  beforeAll(() => {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    instrumentation.setTracerProvider(provider);
    instrumentation.enable();
  });
  afterAll(async () => {
    instrumentation.disable();
    propagation.disable();
    context.disable();
    await under.client.close();
    await under.server.close();
  });

  it('makes each attempt its own client span, with its attempt, the same key hash and its traceparent', async () => {
    under = await startClient((_request, index) => (index === 0 ? { drop: true } : index === 1 ? reply(503) : reply(201)), {
      maxAttempts: 3,
      backoff: { initialMs: 1, maxMs: 5 },
    });
    const parent = provider.getTracer('test').startSpan('checkout');
    const response = await context.with(trace.setSpan(context.active(), parent), () =>
      under.client.post('/charges', { amountCents: 500 }, { key: 'order-1' }),
    );
    parent.end();
    expect(response).toMatchObject({ status: 201, attempts: 3 });

    const attempts = exporter.getFinishedSpans().filter((span) => span.kind === SpanKind.CLIENT);
    expect(attempts.map((span) => span.attributes['idempotency.attempt'])).toEqual([1, 2, 3]);
    expect(attempts.map((span) => span.attributes['http.request.resend_count'])).toEqual([undefined, 1, 2]);
    expect(attempts.map((span) => span.attributes['idempotency.key_hash'])).toEqual(Array(3).fill(hashKey('order-1')));
    expect(attempts.map((span) => span.spanContext().traceId)).toEqual(Array(3).fill(parent.spanContext().traceId));
    expect(attempts.map((span) => span.parentSpanContext?.spanId)).toEqual(Array(3).fill(parent.spanContext().spanId));
    // The server saw, next to the key, a traceparent naming the attempt's own span.
    const sent = under.server.seen.map((request) => request.headers.traceparent);
    expect(sent).toEqual(attempts.map((span) => `00-${span.spanContext().traceId}-${span.spanContext().spanId}-01`));
    expect(under.server.keys()).toEqual(['order-1', 'order-1', 'order-1']);
  });
});

describe('attemptSpanAttributes', () => {
  it("reads undici 5's header lines too, and gives a malformed key no hash", () => {
    expect(attemptSpanAttributes({ headers: 'request-attempt: 2\r\nIdempotency-Key: "order-1"\r\n' })).toEqual({
      'idempotency.attempt': 2,
      'http.request.resend_count': 1,
      'idempotency.key_hash': hashKey('order-1'),
    });
    expect(attemptSpanAttributes({ headers: ['request-attempt', '1', 'idempotency-key', '"\u0001"'] })).toEqual({
      'idempotency.attempt': 1,
    });
  });
});
