/**
 * How payments runs (gateway and orders run on their own): its configuration from the environment,
 * the idempotency store and policy it names, JSON logs,
 * `/health` and `/metrics`, and its start on Fastify. Tests boot services
 * with `./testing`.
 */
export { CALLER_CREDENTIALS, callerCredentials, CallerGuard, presentedToken, principalOf } from './auth';
export type { Caller, Credentials } from './auth';
export { ConfigError, environmentReader, loadConfig } from './config';
export type { ServiceConfig, ServiceName } from './config';
export { HealthController } from './health.controller';
export { idempotencyStore, operationPolicy } from './idempotency-store';
export { serviceLogs } from './logs';
export { MetricsController } from './metrics.controller';
export { reportOutages } from './outages';
export { bootFailure, createServiceApp, prepareServiceApp, runService, serviceAdapter } from './service-app';
export type { BuildApp, RunOptions } from './service-app';
export { connectRedis, UnreachableError } from './unreachable';
