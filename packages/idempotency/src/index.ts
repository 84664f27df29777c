/**
 * Idempotency for a chain of services: claim a key before the side effect,
 * store the result after, make duplicates wait or get 409, refuse a reused
 * key (422), expire old keys. This entry has no framework or driver
 * dependency and holds what a service that protects its requests uses;
 * `./redis`, `./postgres` and `./nest` hold the adapters, `./store` the
 * contract for a store of your own, `./errors` every error class,
 * `./operator` the record inspection and release the CLI is built on.
 */
export { IdempotencyCoordinator } from './coordinator';
export type { Begun, IdempotencyOptions, RunRequest, RunResult } from './coordinator';
export { currentExecution, trackCurrentExecution } from './current-execution';
export {
  IdempotencyError,
  InFlightError,
  InvalidKeyError,
  isIdempotencyError,
  KeyReusedError,
  LeaseLostError,
  MissingKeyError,
  StoreUnavailableError,
  StoredAnswerUnreadableError,
} from './errors';
export { encryptionKeysFromEnv } from './encryption-keys';
export type { AnswerEncryptionKey, AnswerEncryptionOptions } from './encryption-keys';
export { Execution } from './execution';
export { requestFingerprint } from './fingerprint';
export type { FingerprintInput } from './fingerprint';
export { hashKey, headerKeyHash, KEY_HASH_SECRET_ENV } from './key-hash';
export { HeaderName } from './header-name';
export { formatIdempotencyKey, parseIdempotencyKey } from './key';
export { LoggingObserver } from './logging.observer';
export type { StructuredLogger } from './logging.observer';
export { MemoryStore } from './memory-store';
export type { MemoryStoreOptions } from './memory-store';
export { IdempotencyOutcome } from './observer';
export type { IdempotencyEvent, IdempotencyObserver } from './observer';
export { isFinalOutcome, statusOutcome } from './outcome';
export type { OutcomeRule, StatusOutcome } from './outcome';
export type { OperationPolicy } from './policy';
export { requestIdentity } from './request-identity';
export type { RequestIdentity } from './request-identity';
export type { ReplayCacheOptions } from './replay-cache';
export type { IdempotencyStore } from './store';
