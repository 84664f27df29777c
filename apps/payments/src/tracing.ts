import { startTracing } from '@idempotency-chain/service-runtime/tracing';

// Imported first by main.ts: the instrumentations patch http, Nest, ioredis and pg as they load.
// Off (nothing loaded, nothing sent) unless OTEL_EXPORTER_OTLP_ENDPOINT is set.
startTracing('payments');
