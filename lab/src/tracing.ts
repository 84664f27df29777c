import { startTracing } from '@idempotency-chain/service-runtime/tracing';

// Imported first by main.ts, as the apps' own entries do: traced as the service it starts
// (`node lab/dist/main.js <service>`), when OTEL_EXPORTER_OTLP_ENDPOINT is set.
startTracing(process.argv[2] ?? 'lab');
