import { HeaderName } from '@idempotency-chain/idempotency';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { AmqplibInstrumentation } from '@opentelemetry/instrumentation-amqplib';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, NodeTracerProvider } from '@opentelemetry/sdk-trace-node';

/** Routes polled by probes and scrapers: a span each would bury the requests that matter. */
const UNTRACED_PATHS = new Set(['/health', '/metrics']);

/**
 * Imported first by `main.ts`, before any module it instruments: traces
 * payments when `OTEL_EXPORTER_OTLP_ENDPOINT` is set; otherwise does nothing.
 */

/**
 * Trace this process over OTLP/HTTP when `OTEL_EXPORTER_OTLP_ENDPOINT` (or
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) is set; otherwise do nothing at all,
 * so `@opentelemetry/api` stays a no-op and the library's tracing costs
 * nothing. Call it before anything else is loaded: the instrumentations
 * patch `http`, `pg` and `amqplib` as they are required. NestJS 12 has none
 * yet (`@opentelemetry/instrumentation-nestjs-core` patches NestJS before 12
 * only): a request's server span is `http`'s.
 *
 * What a trace shows: the server span of each charge under the caller's
 * W3C `traceparent` (over HTTP, or in a message's headers), the attempt it
 * answered (`http.request.header.request_attempt`), the idempotency outcome
 * the app's `TracingObserver` writes, and the ledger's statements. The other
 * `OTEL_*` variables keep their meaning: `OTEL_SERVICE_NAME` overrides
 * `service`, `OTEL_BSP_SCHEDULE_DELAY` how often spans are sent.
 *
 * @returns the provider, to flush and shut down, or `undefined` when tracing is off.
 */
function startTracing(service: string, env: NodeJS.ProcessEnv = process.env): NodeTracerProvider | undefined {
  if (!env.OTEL_EXPORTER_OTLP_ENDPOINT && !env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return undefined;
  const provider = new NodeTracerProvider({
    // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES, read by the env detector, win over the default name.
    resource: resourceFromAttributes({ 'service.name': service }).merge(detectResources({ detectors: [envDetector] })),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],
  });
  provider.register(); // AsyncLocalStorage context, W3C trace context and baggage propagation
  registerInstrumentations({
    tracerProvider: provider,
    instrumentations: [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (request) => UNTRACED_PATHS.has((request.url ?? '').split('?')[0] ?? ''),
        headersToSpanAttributes: { server: { requestHeaders: [HeaderName.RequestAttempt] } },
      }),
      new PgInstrumentation(),
      new AmqplibInstrumentation(),
    ],
  });
  return provider;
}

startTracing('payments');
