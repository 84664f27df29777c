/**
 * NestJS integration (`@idempotency-chain/idempotency/nest`): a module, a
 * route decorator, the runner its handlers go through (HTTP, microservices
 * and GraphQL mutations), the exception that carries every error of the package,
 * a graceful shutdown on Fastify that drains the module,
 * the filter that renders errors as problem documents, a pipe that refuses
 * bodies nested too deep to validate, metrics, and the store's health for
 * `@nestjs/terminus`.
 */
export { CurrentExecution } from './current-execution.decorator';
export { drainOnShutdown, type DrainOnShutdownOptions } from './drain-on-shutdown';
export { idempotencyErrorOf, statusOf } from './error-status';
export { Idempotent } from './idempotent.decorator';
export type { IdempotencyErrorExtensions } from './graphql/graphql-error';
export { IdempotencyException } from './idempotency.exception';
export { IdempotencyRunner } from './idempotency.runner';
export { IdempotencyHealthIndicator, type StoreHealth } from './idempotency-health.indicator';
export { IdempotencyMetrics } from './idempotency.metrics';
export { IdempotencyModule } from './idempotency.module';
export { IDEMPOTENCY_MODULE_OPTIONS } from './idempotency.module-definition';
export { DEFAULT_REPLAY_HEADERS, type IdempotencyModuleOptions, type IdempotentOptions, type KeyMode } from './idempotency.options';
export type { IdempotentRoute } from './idempotent-routes';
export { NestingDepthPipe } from './nesting-depth.pipe';
export { ProblemDetailsFilter } from './problem-details.filter';
export type { ProblemDocument } from './problem-details';
export { principalScope, type Scope, type ScopeResolver } from './scope';
