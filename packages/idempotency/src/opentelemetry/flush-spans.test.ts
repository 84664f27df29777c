import { trace } from '@opentelemetry/api';
import { BasicTracerProvider, BatchSpanProcessor, InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { flushSpans } from './flush-spans';

describe('flushSpans', () => {
  afterEach(() => trace.disable());

  it('sends the spans the global provider still buffers', async () => {
    const exporter = new InMemorySpanExporter();
    // A delay no test reaches: only a flush sends the span.
    const provider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(exporter, { scheduledDelayMillis: 3_600_000 })] });
    trace.setGlobalTracerProvider(provider);
    trace.getTracer('test').startSpan('checkout').end();
    expect(exporter.getFinishedSpans()).toHaveLength(0);

    await flushSpans();

    expect(exporter.getFinishedSpans().map((span) => span.name)).toEqual(['checkout']);
    await provider.shutdown();
  });

  it('does nothing without an SDK', async () => {
    await expect(flushSpans()).resolves.toBeUndefined();
  });

  it('gives up on a flush that never ends, after its bound', async () => {
    const stuck = { getTracer: () => trace.getTracer('noop'), forceFlush: () => new Promise<void>(() => undefined) };
    trace.setGlobalTracerProvider(stuck);
    await expect(flushSpans(10)).resolves.toBeUndefined();
  });
});
