import { trace } from '@opentelemetry/api';
import { startTracing } from './tracing';

describe('startTracing', () => {
  it('does nothing without an OTLP endpoint: no provider, and the API stays a no-op', () => {
    expect(startTracing('payments', {})).toBeUndefined();
    expect(trace.getTracer('x').startSpan('s').isRecording()).toBe(false);
  });
});
