import { userInfo } from 'node:os';
import { AnswerEncryption, isSealedAnswer } from './answer-encryption';
import type { AnswerEncryptionOptions } from './encryption-keys';
import { holderState, type HolderState } from './holder-liveness';
import { hashKey } from './key-hash';
import { recordKeyOf } from './record-key';
import { isInspectableStore, RecordStatus, type IdempotencyStore, type InspectableStore, type OperatorReleaseResult } from './store';

/**
 * Which record an operator means: the request's own identity (the key from
 * the support ticket, and the service and operation a log line names),
 * hashed the way the coordinator hashes it; or the record key itself, as
 * the application holds it (`execution.recordKey`, what a fenced resource
 * keys its fence on). The logs never carry a record key: it is an unkeyed
 * hash of the key (see {@link OperatorAudit}).
 *
 * @beta
 */
export type RecordTarget = { service: string; operation: string; scope?: string; key: string } | { recordKey: string };

/**
 * The stored answer of a completed record, as {@link inspectRecord} reports it:
 * - `clear`: stored as it is (no encryption);
 * - `encrypted`: encrypted, and no keyring was given;
 * - `decrypted`: encrypted, and decrypted with the keyring given;
 * - `unreadable`: encrypted, and the keyring given does not decrypt it (`reason` says why).
 *
 * @beta
 */
export interface StoredAnswerReport {
  /** Whether the answer is stored in clear, and whether it could be decrypted. */
  status: 'clear' | 'encrypted' | 'decrypted' | 'unreadable';
  /** UTF-8 bytes of the answer as stored (the ciphertext, when encrypted). */
  storedBytes: number;
  /** UTF-8 bytes of the answer itself, when it can be read. */
  bytes?: number;
  /** The answer, only when asked for (`body: true`) and readable. */
  body?: string;
  /** Why an `unreadable` answer cannot be read. */
  reason?: string;
}

/**
 * One line of the operator's audit trail: who looked at or released which
 * record, and what happened. Never the idempotency key, its record key (an
 * unkeyed hash: a guessable key is recovered from it by hashing candidates)
 * or a body; only hashes keyed with the key-hash secret (`hashKey`), so set
 * `IDEMPOTENCY_KEY_HASH_SECRET` as the services do for them to match their
 * logs.
 *
 * @beta
 */
export interface OperatorAudit {
  /** ISO 8601. */
  time: string;
  /** What the operator did. */
  action: 'inspect' | 'release';
  /** `hashKey(recordKey)`: the same for every audit line of one record, however it was named. */
  recordRef: string;
  /** The service, when the record was named by its identity. */
  service?: string;
  /** The operation, when the record was named by its identity. */
  operation?: string;
  /** `hashKey(key)`, as the services' log lines carry it, when the record was named by its identity. */
  keyHash?: string;
  /** The inspection's `status`, or the release's `outcome`. */
  outcome: string;
  /** The epoch of the record found, when there was one. */
  epochBefore?: number;
  /** A release's new epoch: every later claim gets a greater one. */
  epochAfter?: number;
  /** Why, as the operator gave it. */
  reason?: string;
  /** Who did it: `actor` as given, else the OS user. */
  user: string;
}

/**
 * What {@link inspectRecord} found. `absent`: no live record (never
 * claimed, released, or its lease or retention ran out).
 *
 * @beta
 */
export interface RecordInspection {
  /** The record key looked up. */
  recordKey: string;
  /** The record's state. */
  status: RecordStatus | 'absent';
  /** The fencing epoch the record was claimed under. */
  epoch?: number;
  /** Whether an owner is named (in progress: the holder; completed: the completer). */
  ownerPresent?: boolean;
  /** In progress: how long the lease holds without a renewal, in ms. */
  leaseRemainingMs?: number;
  /**
   * In progress: whether its holder is still running it (see `HolderState`):
   * what decides whether `releaseRecord` needs `force`.
   */
  holder?: HolderState;
  /** In progress: how long ago its holder last renewed the lease (or claimed it), in ms; `undefined` when the record does not keep it. */
  lastRenewalMsAgo?: number;
  /** In progress: the holder's heartbeat interval, in ms (`0`: none); `undefined` when the record does not keep it. */
  heartbeatMs?: number;
  /** Completed: how long the answer is kept, in ms. */
  retentionRemainingMs?: number;
  /** The request fingerprint the record was claimed for: a retry with another one is answered 422. */
  fingerprint?: string;
  /** Completed: the stored answer. */
  answer?: StoredAnswerReport;
  /** The audit line of this inspection, for the caller to log. */
  audit: OperatorAudit;
}

/**
 * What {@link releaseRecord} did (see `OperatorReleaseResult`).
 *
 * @beta
 */
export interface RecordRelease {
  /** The record key released. */
  recordKey: string;
  /** What happened (see `OperatorReleaseResult`). */
  outcome: OperatorReleaseResult['outcome'];
  /** The epoch of the record found. */
  epochBefore?: number;
  /** The epoch left as the fence: every later claim gets a greater one. */
  epochAfter?: number;
  /** `refused_holder_alive`: how long ago the holder last renewed its lease, in ms, when the record keeps it. */
  lastRenewalMsAgo?: number;
  /** The audit line of this release, for the caller to log. */
  audit: OperatorAudit;
}

/**
 * Options of {@link inspectRecord}.
 *
 * @beta
 */
export interface InspectRecordOptions {
  /** Include the stored answer itself. Default `false`: only its status and size. */
  body?: boolean;
  /** The keyring the answers were encrypted with (e.g. `encryptionKeysFromEnv()`), to decrypt one. */
  encryption?: AnswerEncryptionOptions;
  /** Who is looking, for the audit line (an admin endpoint's authenticated user). Default: the OS user. */
  actor?: string;
}

/**
 * Options of {@link releaseRecord}.
 *
 * @beta
 */
export interface ReleaseRecordOptions {
  /**
   * Release a completed record too, deleting its stored answer, or an
   * in-progress record whose holder is alive (see `HolderState`), ending an
   * execution that may still run its side effect. Dangerous either way:
   * the next request with this key executes the operation again (a
   * customer may be charged twice). Default `false`: both are refused
   * (`refused_completed`, `refused_holder_alive`).
   */
  force?: boolean;
  /** Why, for the audit line (a ticket, an incident). */
  reason?: string;
  /** Who is releasing, for the audit line. Default: the OS user. */
  actor?: string;
}

/**
 * The record key `target` names: the coordinator's own hash of service,
 * operation, scope (default `''`, as the coordinator's) and key.
 */
function targetRecordKey(target: RecordTarget): string {
  return 'recordKey' in target ? target.recordKey : recordKeyOf(target.service, target.operation, target.scope ?? '', target.key);
}

/**
 * Look at one record as it is in `store`, changing nothing (a record of
 * another format version is refused with `RecordVersionError`): its state,
 * epoch, lease or retention left, and its stored answer's status and size
 * (its body with `body: true`, decrypted with `encryption`).
 *
 * @example
 * const found = await inspectRecord(store, { service: 'payments', operation: 'payments.charge', scope: tenant, key });
 * if (found.status === 'completed') console.log('charged; answer kept for', found.retentionRemainingMs, 'ms');
 *
 * @throws TypeError when `store` has no operator interface (`InspectableStore`).
 * @beta
 */
export async function inspectRecord(
  store: IdempotencyStore,
  target: RecordTarget,
  options: InspectRecordOptions = {},
): Promise<RecordInspection> {
  const recordKey = targetRecordKey(target);
  const record = await inspectable(store).inspect(recordKey);
  const audit = auditLine('inspect', target, record?.status ?? 'absent', options.actor, { epochBefore: record?.epoch });
  if (!record) return { recordKey, status: 'absent', audit };
  const completed = record.status === RecordStatus.Completed;
  const { lastRenewalMsAgo, heartbeatMs } = record;
  return {
    recordKey,
    status: record.status,
    epoch: record.epoch,
    ownerPresent: record.ownerPresent,
    ...(record.remainingMs !== undefined && { [completed ? 'retentionRemainingMs' : 'leaseRemainingMs']: record.remainingMs }),
    ...(!completed && { holder: holderState(lastRenewalMsAgo, heartbeatMs) }),
    ...(!completed && lastRenewalMsAgo !== undefined && { lastRenewalMsAgo }),
    ...(!completed && heartbeatMs !== undefined && { heartbeatMs }),
    fingerprint: record.fingerprint,
    ...(completed && record.result !== undefined && { answer: answerReport(recordKey, record.fingerprint, record.result, options) }),
    audit,
  };
}

/**
 * End one record whoever holds it, for a key held by a holder that is
 * gone, or stuck. An in-progress record whose holder is alive (it renewed
 * its lease within two heartbeat intervals, or the record does not say,
 * see `HolderState`) is refused (`refused_holder_alive`) unless `force`:
 * its execution is running, and may still charge the customer after the
 * release, while the retry the release lets in charges them again. A
 * released in-progress record's owner loses it (its `complete`,
 * `renew` and `release` answer `false`, a transactional completion rolls
 * back) and its epoch moves forward, so the next claim's epoch is greater
 * than `epochAfter`. A resource fenced on the record refuses the old
 * holder's writes once it has seen a write of a later claim; one it has
 * not seen yet cannot know. A completed record is refused unless `force`,
 * which deletes its answer: the next request executes again, once it
 * reaches the store. A process that has replayed the answer keeps it in its
 * replay cache (the coordinator's `replayCache`, on by default) and replays
 * it without asking the store for up to the cache's `maxAgeMs` (60 s by
 * default), or until the retention the record had left runs out, the cache
 * evicts it, or the process restarts: restart the service's instances after
 * a forced release for the next request to execute at once.
 * A record of another format version is refused (`RecordVersionError`),
 * `force` or not.
 *
 * @example
 * const { outcome, audit } = await releaseRecord(store, { recordKey }, { reason: 'INC-1234 holder gone' });
 * logger.info(audit, 'idempotency record release');
 *
 * @throws TypeError when `store` has no operator interface (`InspectableStore`).
 * @beta
 */
export async function releaseRecord(
  store: IdempotencyStore,
  target: RecordTarget,
  options: ReleaseRecordOptions = {},
): Promise<RecordRelease> {
  const recordKey = targetRecordKey(target);
  const result = await inspectable(store).releaseByOperator(recordKey, { force: options.force === true });
  const epochs = {
    ...('epochBefore' in result && { epochBefore: result.epochBefore }),
    ...('epochAfter' in result && { epochAfter: result.epochAfter }),
  };
  const audit = auditLine('release', target, result.outcome, options.actor, { ...epochs, reason: options.reason });
  const renewal = 'lastRenewalMsAgo' in result && result.lastRenewalMsAgo !== undefined && { lastRenewalMsAgo: result.lastRenewalMsAgo };
  return { recordKey, outcome: result.outcome, ...epochs, ...renewal, audit };
}

function inspectable(store: IdempotencyStore): InspectableStore {
  if (!isInspectableStore(store)) throw new TypeError('This idempotency store cannot inspect or release records (no InspectableStore)');
  return store;
}

/** The answer as the coordinator would open it: for the record, and the fingerprint it carries. */
function answerReport(recordKey: string, fingerprint: string, stored: string, options: InspectRecordOptions): StoredAnswerReport {
  const storedBytes = Buffer.byteLength(stored, 'utf8');
  const readable = (status: 'clear' | 'decrypted', answer: string): StoredAnswerReport => ({
    status,
    storedBytes,
    bytes: Buffer.byteLength(answer, 'utf8'),
    ...(options.body && { body: answer }),
  });
  if (!isSealedAnswer(stored)) return readable('clear', stored);
  if (!options.encryption) return { status: 'encrypted', storedBytes };
  try {
    return readable('decrypted', new AnswerEncryption(options.encryption, 'inspectRecord').open(recordKey, fingerprint, stored));
  } catch (error) {
    return { status: 'unreadable', storedBytes, reason: error instanceof Error ? error.message : String(error) };
  }
}

function auditLine(
  action: OperatorAudit['action'],
  target: RecordTarget,
  outcome: string,
  actor: string | undefined,
  extra: { epochBefore?: number | undefined; epochAfter?: number | undefined; reason?: string | undefined },
): OperatorAudit {
  return auditRecord(action, target, outcome, { ...extra, actor }) as OperatorAudit;
}

/**
 * An audit line's fields, in their order, without the ones that are
 * unset; for the CLI's failures too (a usage error, a store that does not
 * answer), which may have no action or record to name.
 */
export function auditRecord(
  action: string,
  target: RecordTarget | undefined,
  outcome: string,
  extra: { epochBefore?: number | undefined; epochAfter?: number | undefined; reason?: string | undefined; actor?: string | undefined },
): Partial<OperatorAudit> & Pick<OperatorAudit, 'time' | 'outcome' | 'user'> {
  return {
    time: new Date().toISOString(),
    action: action as OperatorAudit['action'],
    ...(target !== undefined && { recordRef: hashKey(targetRecordKey(target)) }),
    ...(target !== undefined &&
      !('recordKey' in target) && { service: target.service, operation: target.operation, keyHash: hashKey(target.key) }),
    outcome,
    ...(extra.epochBefore !== undefined && { epochBefore: extra.epochBefore }),
    ...(extra.epochAfter !== undefined && { epochAfter: extra.epochAfter }),
    ...(extra.reason !== undefined && { reason: extra.reason }),
    user: extra.actor ?? osUser(),
  };
}

/** The OS user running this process; a container without a passwd entry has none by name. */
function osUser(): string {
  try {
    return userInfo().username;
  } catch {
    return process.env.USER ?? process.env.LOGNAME ?? `uid:${process.getuid?.() ?? 'unknown'}`;
  }
}
