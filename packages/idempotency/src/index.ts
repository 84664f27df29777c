/**
 * Idempotency for a chain of services: claim a key before the side effect,
 * store the result after, make duplicates wait or get 409, refuse a reused
 * key (422), expire old keys. This entry has no framework or driver
 * dependency; `./redis` and `./nest` hold the adapters.
 */
export { IdempotencyCoordinator } from './coordinator';
export type { ExecutionContext, IdempotencyOptions, RunRequest, RunResult } from './coordinator';
export * from './errors';
export { hashKey, pickFields, requestFingerprint } from './fingerprint';
export type { FingerprintInput } from './fingerprint';
export { Headers } from './headers';
export { formatIdempotencyKey, MAX_KEY_LENGTH, parseIdempotencyKey } from './key';
export { MemoryStore } from './memory-store';
export type { MemoryStoreOptions } from './memory-store';
export { IdempotencyOutcome } from './observer';
export type { IdempotencyEvent, IdempotencyObserver } from './observer';
export { isFinalOutcome } from './outcome';
export type { OutcomeRule, StatusBearing } from './outcome';
export { DEFAULT_POLICY, resolvePolicy } from './policy';
export type { InFlightPolicy, OperationPolicy, StoreFailurePolicy } from './policy';
export { isTransactionalStore, RecordStatus } from './store';
export type { ClaimRequest, ClaimResult, IdempotencyStore, StoreTransaction, TransactionalStore } from './store';
