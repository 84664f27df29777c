/**
 * NestJS integration (`@idempotency-chain/idempotency/nest`): a module, a
 * route decorator, its interceptor (HTTP and microservices), the exception
 * filter that renders every error as a problem document, and metrics.
 */
export { Idempotent } from './idempotent.decorator';
export { IdempotencyExecution } from './idempotency-execution.decorator';
export { currentExecution, type IdempotentExecution } from './idempotency-execution';
export { IdempotencyInterceptor, type StoredResponse } from './idempotency.interceptor';
export { IdempotencyMetrics } from './idempotency.metrics';
export { IdempotencyModule } from './idempotency.module';
export { IDEMPOTENCY_MODULE_OPTIONS } from './idempotency.module-definition';
export type { IdempotencyModuleOptions, IdempotentOptions, KeyMode } from './idempotency.options';
export { ProblemDetailsFilter } from './problem-details.filter';
export { toProblem, type Problem, type ProblemDocument } from './problem-details';
