/**
 * Idempotency for a chain of services: claim a key before the side effect,
 * store the result after, make duplicates wait or get 409, refuse a reused
 * key (422), expire old keys. This entry has no framework or driver
 * dependency; `./redis`, `./postgres` and `./nest` hold the adapters.
 */
export { IdempotencyCoordinator } from './coordinator';
export type { Begun, IdempotencyOptions, RunRequest, RunResult } from './coordinator';
export { currentExecution, trackCurrentExecution } from './current-execution';
export * from './errors';
export { encryptionKeysFromEnv } from './encryption-keys';
export type { AnswerEncryptionKey, AnswerEncryptionOptions } from './encryption-keys';
export { Execution } from './execution';
export { requestFingerprint } from './fingerprint';
export { hashKey, headerKeyHash, KEY_HASH_SECRET_ENV } from './key-hash';
export type { FingerprintInput } from './fingerprint';
export { HeaderName } from './header-name';
export { formatIdempotencyKey, parseIdempotencyKey } from './key';
export { LoggingObserver } from './logging.observer';
export type { StructuredLogger } from './logging.observer';
export { MemoryStore } from './memory-store';
export { inspectRecord, releaseRecord } from './operator-records';
export type {
  InspectRecordOptions,
  OperatorAudit,
  RecordInspection,
  RecordRelease,
  RecordTarget,
  ReleaseRecordOptions,
  StoredAnswerReport,
} from './operator-records';
export type { HolderState } from './holder-liveness';
export type { MemoryStoreOptions } from './memory-store';
export { IdempotencyOutcome } from './observer';
export type { IdempotencyEvent, IdempotencyObserver } from './observer';
export { isFinalOutcome, statusOutcome } from './outcome';
export type { OutcomeRule, StatusOutcome } from './outcome';
export { requestIdentity } from './request-identity';
export type { RequestIdentity } from './request-identity';
export type { ReplayCacheOptions } from './replay-cache';
export { InvalidPolicyError } from './policy';
export type { InFlightPolicy, OperationPolicy, StoreFailurePolicy } from './policy';
export { RecordStatus } from './store';
export type {
  ClaimRequest,
  ClaimResult,
  IdempotencyStore,
  InspectableStore,
  OperatorReleaseResult,
  StoreDegraded,
  StoredRecord,
  StoreTransaction,
  TransactionalStore,
} from './store';
