/**
 * Operator inspection and release (`inspectRecord`, `releaseRecord`),
 * against a real store: the same cases for memory, Redis, Redis Cluster
 * and PostgreSQL. The holders here are real claims of the store and real
 * executions of a coordinator; the fenced resource is the smallest one
 * that fences as the README tells a resource to: it keeps the highest
 * epoch it has seen per record and refuses a write carrying a lower one.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { IdempotencyCoordinator, type RunRequest } from './coordinator';
import type { AnswerEncryptionKey } from './encryption-keys';
import { isIdempotencyError, LeaseLostError } from './errors';
import { claimSilent } from './holder-liveness.test-support';
import { eventually } from './testing/async';
import { hashKey } from './key-hash';
import { inspectRecord, releaseRecord } from './operator-records';
import type { InspectableStore } from './store';

const SERVICE = 'payments';
const OPERATION = 'payments.charge';
const SCOPE = 'tenant:acme';
const FINGERPRINT = 'fingerprint-41aa';
const LEASE_MS = 60_000;
const RETENTION_MS = 3_600_000;
const KEYS: AnswerEncryptionKey[] = [{ id: 'ops1', key: randomBytes(32) }];
const ANSWER = { statusCode: 201, body: { chargeId: 'ch_1', amountCents: 500 } };

/** A resource fenced on the record: refuses a write whose epoch is older than the newest it has seen. */
class FencedLedger {
  private readonly newest = new Map<string, number>();
  readonly writes: Array<{ recordKey: string; epoch: number }> = [];

  write(recordKey: string, epoch: number): boolean {
    if (epoch < (this.newest.get(recordKey) ?? 0)) return false;
    this.newest.set(recordKey, epoch);
    this.writes.push({ recordKey, epoch });
    return true;
  }
}

const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (error: unknown) => error,
  );

/** The operator cases against the store `store()` returns once `beforeAll` has run. */
export function describeOperatorRecords(name: string, store: () => InspectableStore): void {
  describe(`operator inspect and release: ${name}`, () => {
    const coordinator = (keys?: AnswerEncryptionKey[]) =>
      new IdempotencyCoordinator({
        service: SERVICE,
        store: store(),
        replayCache: false,
        defaults: { leaseMs: LEASE_MS, retentionMs: RETENTION_MS },
        ...(keys && { encryption: { keys } }),
      });
    const request = (): RunRequest => ({ operation: OPERATION, key: `key-${randomUUID()}`, scope: SCOPE, fingerprint: FINGERPRINT });
    /** The fingerprint as the store's records keep it, and an inspection reports it. */
    let keptFingerprint = FINGERPRINT;
    beforeAll(() => {
      keptFingerprint = store().keptFingerprint?.(FINGERPRINT) ?? FINGERPRINT;
    });
    const target = (req: RunRequest) => ({ service: SERVICE, operation: OPERATION, scope: SCOPE, key: req.key });
    const claimed = async (recordKey: string, owner: string): Promise<number> => {
      const claim = await store().claim({ recordKey, fingerprint: FINGERPRINT, owner, leaseMs: LEASE_MS });
      if (claim.status !== 'claimed') throw new Error(`expected a claim, got ${claim.status}`);
      return claim.epoch;
    };
    /** A claim by a holder that is gone: it never renews, and the store finds it silent. */
    const gone = (recordKey: string, owner: string): Promise<number> =>
      claimSilent(store(), { recordKey, fingerprint: FINGERPRINT, owner, leaseMs: LEASE_MS });

    test('a record never claimed is absent, found by its key or by its record key alike', async () => {
      const req = request();
      const byKey = await inspectRecord(store(), target(req));
      expect(byKey).toMatchObject({ status: 'absent', recordKey: coordinator().recordKey(OPERATION, SCOPE, req.key) });
      expect(await inspectRecord(store(), { recordKey: byKey.recordKey })).toMatchObject({ status: 'absent' });
      // The audit line names the record by keyed hashes only: the same ref however it was named, the key hash the logs carry.
      const recordRef = hashKey(byKey.recordKey);
      expect(byKey.audit).toMatchObject({
        action: 'inspect',
        recordRef,
        service: SERVICE,
        operation: OPERATION,
        keyHash: hashKey(req.key),
      });
      expect(byKey.audit.outcome).toBe('absent');
      expect((await inspectRecord(store(), { recordKey: byKey.recordKey })).audit).toMatchObject({ recordRef });
      expect(JSON.stringify(byKey.audit)).not.toContain(req.key);
      expect(JSON.stringify(byKey.audit)).not.toContain(byKey.recordKey);
    });

    test('an in-progress record: its epoch, its holder, the lease left and the fingerprint; no answer', async () => {
      const req = request();
      const begun = await coordinator().begin(req);
      const execution = begun.execution!;
      try {
        const found = await inspectRecord(store(), target(req));
        expect(found).toMatchObject({ status: 'in_progress', epoch: execution.epoch, ownerPresent: true, fingerprint: keptFingerprint });
        expect(found.leaseRemainingMs).toBeGreaterThan(0);
        expect(found.leaseRemainingMs).toBeLessThanOrEqual(LEASE_MS);
        expect(found.answer).toBeUndefined();
        expect(found.retentionRemainingMs).toBeUndefined();
        expect(found.audit).toMatchObject({ outcome: 'in_progress', epochBefore: execution.epoch });
      } finally {
        await execution.release();
      }
    });

    test('a completed record: retention left, the answer’s status and size, and its body only when asked', async () => {
      const req = request();
      const ran = await coordinator().run(req, async () => ANSWER);
      const stored = JSON.stringify(ANSWER);
      const found = await inspectRecord(store(), target(req));
      expect(found).toMatchObject({ status: 'completed', epoch: ran.epoch, ownerPresent: true, fingerprint: keptFingerprint });
      expect(found.retentionRemainingMs).toBeGreaterThan(0);
      expect(found.retentionRemainingMs).toBeLessThanOrEqual(RETENTION_MS);
      expect(found.leaseRemainingMs).toBeUndefined();
      expect(found.answer).toEqual({ status: 'clear', storedBytes: Buffer.byteLength(stored), bytes: Buffer.byteLength(stored) });
      expect((await inspectRecord(store(), target(req), { body: true })).answer?.body).toBe(stored);
    });

    test('release of an in-progress record whose holder is silent: the holder can no longer complete, renew or release; the next claim’s epoch is greater, and fences the old one out', async () => {
      const recordKey = coordinator().recordKey(OPERATION, SCOPE, `key-${randomUUID()}`);
      const ledger = new FencedLedger();
      const held = await gone(recordKey, 'gone-holder');
      expect(await inspectRecord(store(), { recordKey })).toMatchObject({ holder: 'silent', heartbeatMs: 20 });
      expect(ledger.write(recordKey, held)).toBe(true);

      const released = await releaseRecord(store(), { recordKey }, { reason: 'INC-1 holder gone' });
      expect(released).toMatchObject({ outcome: 'released', epochBefore: held, epochAfter: held + 1 });
      expect(released.audit).toMatchObject({
        action: 'release',
        recordRef: hashKey(recordKey),
        outcome: 'released',
        epochBefore: held,
        epochAfter: held + 1,
      });
      expect(JSON.stringify(released.audit)).not.toContain(recordKey);
      expect(released.audit.reason).toBe('INC-1 holder gone');
      expect(typeof released.audit.user).toBe('string');
      expect(await inspectRecord(store(), { recordKey })).toMatchObject({ status: 'absent' });

      // The silent holder comes back: every owner check now fails, and changes nothing.
      expect(await store().complete(recordKey, 'gone-holder', '"late"', RETENTION_MS)).toBe(false);
      expect(await store().renew(recordKey, 'gone-holder', LEASE_MS)).toBe(false);
      expect(await store().release(recordKey, 'gone-holder')).toBe(false);
      expect(await inspectRecord(store(), { recordKey })).toMatchObject({ status: 'absent' });

      const next = await claimed(recordKey, 'next-holder');
      expect(next).toBeGreaterThan(released.epochAfter!);
      expect(ledger.write(recordKey, next)).toBe(true);
      expect(ledger.write(recordKey, held)).toBe(false); // the old holder's fenced write, refused
      // Nor can the old holder's completion overwrite the new claim, or its release end it.
      expect(await store().complete(recordKey, 'gone-holder', '"late"', RETENTION_MS)).toBe(false);
      expect(await store().release(recordKey, 'gone-holder')).toBe(false);
      expect(await inspectRecord(store(), { recordKey })).toMatchObject({ status: 'in_progress', epoch: next });
      expect(await store().release(recordKey, 'next-holder')).toBe(true);
    });

    test('release of a record a live execution holds is refused without force, changing nothing: the holder completes, a retry replays', async () => {
      const req = request();
      const idempotency = coordinator();
      const execution = (await idempotency.begin(req)).execution!;
      const found = await inspectRecord(store(), target(req));
      expect(found).toMatchObject({ status: 'in_progress', holder: 'alive', heartbeatMs: LEASE_MS / 3 });
      expect(found.lastRenewalMsAgo).toBeGreaterThanOrEqual(0);
      expect(found.lastRenewalMsAgo).toBeLessThan(LEASE_MS / 3);

      const refused = await releaseRecord(store(), target(req), { reason: 'stuck?' });
      expect(refused).toMatchObject({ outcome: 'refused_holder_alive', epochBefore: execution.epoch });
      expect(refused.epochAfter).toBeUndefined();
      expect(refused.lastRenewalMsAgo).toBeGreaterThanOrEqual(0);
      expect(refused.audit).toMatchObject({ action: 'release', outcome: 'refused_holder_alive', epochBefore: execution.epoch });
      expect(await inspectRecord(store(), target(req))).toMatchObject({ status: 'in_progress', epoch: execution.epoch });

      expect(await execution.complete(JSON.stringify(ANSWER))).toBe(true);
      let executions = 0;
      const retry = await idempotency.run(req, async () => {
        executions += 1;
        return ANSWER;
      });
      expect(retry).toMatchObject({ replayed: true });
      expect(executions).toBe(0);
    });

    test('issue 35: a release while the holder charges and renews its lease is refused, so the customer is charged once', async () => {
      const idempotency = new IdempotencyCoordinator({
        service: SERVICE,
        store: store(),
        replayCache: false,
        defaults: { leaseMs: 3_000, heartbeatMs: 1_000, retentionMs: RETENTION_MS },
      });
      const req = request();
      const recordKey = idempotency.recordKey(OPERATION, SCOPE, req.key);
      let charges = 0;
      let charging!: () => void;
      const started = new Promise<void>((resolve) => (charging = resolve));
      let operatorDone!: () => void;
      const released = new Promise<void>((resolve) => (operatorDone = resolve));
      const charge = async () => {
        charging();
        await released; // still in flight at the payment provider while the operator acts
        charges += 1;
        return ANSWER;
      };
      const holder = failure(idempotency.run(req, charge));
      await started;
      // Event ordering, not a sleep: until the holder's heartbeat has renewed the lease once.
      const claimedAt = Date.now();
      await eventually(async () => {
        const { lastRenewalMsAgo } = await inspectRecord(store(), { recordKey });
        return lastRenewalMsAgo !== undefined && lastRenewalMsAgo < Date.now() - claimedAt - 200;
      }, 'a renewal of the holder’s lease');
      const found = await inspectRecord(store(), { recordKey });
      const release = await releaseRecord(store(), { recordKey }, { reason: 'INC-35 looks stuck' });
      operatorDone();
      expect(await holder).toBeUndefined();
      const retry = await idempotency.run(req, charge);

      expect({ charges, outcome: release.outcome }).toEqual({ charges: 1, outcome: 'refused_holder_alive' });
      expect(retry.replayed).toBe(true);
      expect(found).toMatchObject({ status: 'in_progress', holder: 'alive', heartbeatMs: 1_000 });
    });

    test('a silent holder that renews is alive again: its release is refused', async () => {
      const recordKey = coordinator().recordKey(OPERATION, SCOPE, `key-${randomUUID()}`);
      // A heartbeat of 1 s: alive for 2 s after the renewal, a wide margin for the two calls below.
      const held = await claimSilent(store(), { recordKey, fingerprint: FINGERPRINT, owner: 'slow-holder', leaseMs: LEASE_MS }, 1_000);
      expect((await inspectRecord(store(), { recordKey })).holder).toBe('silent');
      expect(await store().renew(recordKey, 'slow-holder', LEASE_MS)).toBe(true);
      expect(await releaseRecord(store(), { recordKey })).toMatchObject({ outcome: 'refused_holder_alive', epochBefore: held });
      const found = await inspectRecord(store(), { recordKey });
      expect(found).toMatchObject({ status: 'in_progress', epoch: held, holder: 'alive', heartbeatMs: 1_000 });
      expect(found.lastRenewalMsAgo).toBeLessThanOrEqual(2_000);
      expect(await store().release(recordKey, 'slow-holder')).toBe(true);
    });

    test('a holder claimed without a heartbeat, or by a release that kept none, counts as alive for as long as its lease', async () => {
      const recordKey = coordinator().recordKey(OPERATION, SCOPE, `key-${randomUUID()}`);
      const held = await claimed(recordKey, 'holder-without-heartbeat');
      expect((await inspectRecord(store(), { recordKey })).holder).toBe('alive');
      expect(await releaseRecord(store(), { recordKey })).toMatchObject({ outcome: 'refused_holder_alive', epochBefore: held });
      expect(await store().release(recordKey, 'holder-without-heartbeat')).toBe(true);
    });

    test('release of a record a live execution holds, with force: its completion is refused as a lost lease, and a retry executes under a greater epoch', async () => {
      const req = request();
      const idempotency = coordinator();
      const begun = await idempotency.begin(req);
      const execution = begun.execution!;
      const released = await releaseRecord(store(), target(req), { reason: 'stuck', force: true });
      expect(released).toMatchObject({ outcome: 'forced_holder_alive', epochBefore: execution.epoch });
      expect(released.audit).toMatchObject({ outcome: 'forced_holder_alive' });

      const error = await failure(execution.complete(JSON.stringify(ANSWER)));
      expect(isIdempotencyError(error, LeaseLostError)).toBe(true);
      const retry = await idempotency.run(req, async () => ANSWER);
      expect(retry).toMatchObject({ replayed: false });
      expect(retry.epoch).toBeGreaterThan(released.epochAfter!);
    });

    test('release of a record a live execution holds: its next heartbeat finds the lease gone and aborts its signal', async () => {
      const idempotency = new IdempotencyCoordinator({
        service: SERVICE,
        store: store(),
        replayCache: false,
        defaults: { leaseMs: LEASE_MS, heartbeatMs: 20 },
      });
      const execution = (await idempotency.begin(request())).execution!;
      const aborted = new Promise<unknown>((resolve) => execution.signal.addEventListener('abort', () => resolve(execution.signal.reason)));
      expect((await releaseRecord(store(), { recordKey: execution.recordKey }, { force: true })).outcome).toBe('forced_holder_alive');
      expect(isIdempotencyError(await aborted, LeaseLostError)).toBe(true);
      await execution.release(); // what the action's caller does next: answers false in the store, changes nothing
      expect(await inspectRecord(store(), { recordKey: execution.recordKey })).toMatchObject({ status: 'absent' });
    });

    test('release wakes the requests waiting on the record', async () => {
      const recordKey = coordinator().recordKey(OPERATION, SCOPE, `key-${randomUUID()}`);
      await gone(recordKey, 'holder');
      const waiting = store().waitForChange(recordKey, 120_000);
      expect((await releaseRecord(store(), { recordKey })).outcome).toBe('released');
      await waiting; // resolved by the release's wake-up, long before its timeout
      expect(await inspectRecord(store(), { recordKey })).toMatchObject({ status: 'absent' });
    });

    test('release of a completed record is refused without force, changing nothing; with force its answer is gone and the next request executes again', async () => {
      const req = request();
      const idempotency = coordinator();
      let executions = 0;
      const action = async () => {
        executions += 1;
        return ANSWER;
      };
      const first = await idempotency.run(req, action);

      const refused = await releaseRecord(store(), target(req));
      expect(refused).toMatchObject({ outcome: 'refused_completed', epochBefore: first.epoch });
      expect(refused.epochAfter).toBeUndefined();
      expect(refused.audit).toMatchObject({ outcome: 'refused_completed', epochBefore: first.epoch });
      expect(await inspectRecord(store(), target(req))).toMatchObject({ status: 'completed', epoch: first.epoch });
      expect(await idempotency.run(req, action)).toMatchObject({ replayed: true });

      const forced = await releaseRecord(store(), target(req), { force: true, reason: 'INC-2 customer asked for a retry' });
      expect(forced).toMatchObject({ outcome: 'forced', epochBefore: first.epoch, epochAfter: first.epoch! + 1 });
      expect(await inspectRecord(store(), target(req))).toMatchObject({ status: 'absent' });
      const again = await idempotency.run(req, action);
      expect(again).toMatchObject({ replayed: false });
      expect(again.epoch).toBeGreaterThan(forced.epochAfter!);
      expect(executions).toBe(2);
    });

    test('a forced release reaches a process that replays the answer from memory within its replay cache’s maxAgeMs', async () => {
      const req = request();
      const service = new IdempotencyCoordinator({
        service: SERVICE,
        store: store(),
        replayCache: { maxAgeMs: 300 },
        defaults: { leaseMs: LEASE_MS, retentionMs: RETENTION_MS },
      });
      let executions = 0;
      const action = async () => {
        executions += 1;
        return ANSWER;
      };
      await service.run(req, action);
      expect(await service.run(req, action)).toMatchObject({ replayed: true }); // from the store; kept in memory from now on
      expect((await releaseRecord(store(), target(req), { force: true })).outcome).toBe('forced');
      // Replayed from memory while the entry is young; executed again once the store is asked: never twice more.
      await eventually(async () => (await service.run(req, action)).replayed === false, 'the forced release to be seen', {
        timeoutMs: 30_000,
      });
      expect(executions).toBe(2);
    });

    test('release of an absent record says so and changes nothing', async () => {
      const recordKey = coordinator().recordKey(OPERATION, SCOPE, `key-${randomUUID()}`);
      const absent = await releaseRecord(store(), { recordKey }, { force: true });
      expect(absent).toMatchObject({ outcome: 'absent' });
      expect(absent.epochBefore).toBeUndefined();
      expect(absent.audit).toMatchObject({ action: 'release', recordRef: hashKey(recordKey), outcome: 'absent' });
      // A record released by its own holder is absent too: its row or counter is a fence, not a record.
      await claimed(recordKey, 'holder');
      expect(await store().release(recordKey, 'holder')).toBe(true);
      expect((await releaseRecord(store(), { recordKey })).outcome).toBe('absent');
    });

    test('an encrypted answer: reported encrypted with its size and no body without the keyring; decrypted with it; unreadable under another', async () => {
      const req = request();
      await coordinator(KEYS).run(req, async () => ANSWER);
      const plain = JSON.stringify(ANSWER);

      const without = await inspectRecord(store(), target(req), { body: true });
      expect(without.answer?.status).toBe('encrypted');
      expect(without.answer?.storedBytes).toBeGreaterThan(Buffer.byteLength(plain));
      expect(without.answer?.body).toBeUndefined();
      expect(JSON.stringify(without)).not.toContain('ch_1');

      const withKeys = await inspectRecord(store(), target(req), { body: true, encryption: { keys: KEYS } });
      expect(withKeys.answer).toEqual({
        status: 'decrypted',
        storedBytes: without.answer?.storedBytes,
        bytes: Buffer.byteLength(plain),
        body: plain,
      });
      const sizeOnly = await inspectRecord(store(), target(req), { encryption: { keys: KEYS } });
      expect(sizeOnly.answer).toMatchObject({ status: 'decrypted', bytes: Buffer.byteLength(plain) });
      expect(sizeOnly.answer?.body).toBeUndefined();

      const other = await inspectRecord(store(), target(req), { body: true, encryption: { keys: [{ id: 'ops1', key: randomBytes(32) }] } });
      expect(other.answer).toMatchObject({ status: 'unreadable', storedBytes: without.answer?.storedBytes });
      expect(other.answer?.reason).toContain('does not authenticate');
      expect(other.answer?.body).toBeUndefined();
    });
  });
}
