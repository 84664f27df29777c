/**
 * OpenTelemetry for the coordinator's decisions: `TracingObserver` puts
 * them on the active span; `flushSpans` sends what is buffered at shutdown. Needs `@opentelemetry/api` (a no-op until an SDK
 * is registered); the SDK is the application's choice.
 */
export { IdempotencyAttribute } from './attributes';
export { flushSpans } from './flush-spans';
export { TracingObserver } from './tracing.observer';
