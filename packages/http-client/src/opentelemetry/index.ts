/**
 * OpenTelemetry for the client's attempts: `attemptSpanAttributes`, the
 * undici instrumentation's `startSpanHook` that gives each attempt's client
 * span its attempt number and key hash. Needs `@opentelemetry/api`.
 */
export { attemptSpanAttributes } from './attempt-span';
export type { UndiciRequestHeaders } from './attempt-span';
