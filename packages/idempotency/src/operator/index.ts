/**
 * Operating on records (`@idempotency-chain/idempotency/operator`): look
 * into one record and release a stuck one safely, from code (an admin
 * endpoint, a runbook script). The `idempotency-records` CLI is built on
 * these; a service that only protects its requests never needs them.
 */
export { inspectRecord, releaseRecord } from '../operator-records';
export type {
  InspectRecordOptions,
  OperatorAudit,
  RecordInspection,
  RecordRelease,
  RecordTarget,
  ReleaseRecordOptions,
  StoredAnswerReport,
} from '../operator-records';
export type { HolderState } from '../holder-liveness';
