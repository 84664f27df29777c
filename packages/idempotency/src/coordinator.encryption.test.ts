import { randomBytes } from 'node:crypto';
import { latch } from '../test/support/async';
import { Recorder } from '../test/support/recorder';
import { IdempotencyCoordinator, type RunRequest } from './coordinator';
import type { AnswerEncryptionKey } from './encryption-keys';
import { isIdempotencyError, ResultNotStoredError, StoredAnswerUnreadableError } from './errors';
import { hashKey } from './key-hash';
import { MemoryStore } from './memory-store';
import { InvalidPolicyError } from './errors';

/**
 * Encryption at rest as the coordinator does it, over a MemoryStore that
 * keeps what it was asked to store; several coordinators on one store are
 * replicas with different keyrings. The raw Redis hash and PostgreSQL row
 * are read in the stores' own encryption tests.
 */
class KeepingStore extends MemoryStore {
  readonly stored = new Map<string, string>();
  override complete(recordKey: string, owner: string, result: string, retentionMs: number): Promise<boolean> {
    this.stored.set(recordKey, result);
    return super.complete(recordKey, owner, result, retentionMs);
  }
}

const K1: AnswerEncryptionKey = { id: 'k1', key: randomBytes(32) };
const K2: AnswerEncryptionKey = { id: 'k2', key: randomBytes(32) };
const MARKER = 'MARKER-7f3a';
const OPERATION = 'payments.charge';

let store: KeepingStore;
let recorder: Recorder;
let n = 0;

beforeEach(() => {
  store = new KeepingStore();
  recorder = new Recorder();
});
afterEach(() => store.close());

const coordinator = (keys?: AnswerEncryptionKey[], extra: { acceptPlaintext?: boolean; replayCache?: false } = {}) =>
  new IdempotencyCoordinator({
    service: 'payments',
    store,
    observer: recorder,
    replayCache: extra.replayCache,
    ...(keys && { encryption: { keys, acceptPlaintext: extra.acceptPlaintext } }),
  });
const request = (key = `key-${++n}`): RunRequest => ({ operation: OPERATION, key, scope: 'tenant:1', fingerprint: 'fp-1' });
const charge = (runs: { count: number }) => async () => (runs.count++, { statusCode: 201, body: { chargeId: 'ch_1', note: MARKER } });
const neverRuns = async (): Promise<never> => {
  throw new Error('this action must not run');
};
const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (error: unknown) => error,
  );

describe('IdempotencyCoordinator with encryption', () => {
  test('stores the result encrypted under the first key, and replays it decrypted', async () => {
    const idempotency = coordinator([K1]);
    const runs = { count: 0 };
    const req = request();
    const first = await idempotency.run(req, charge(runs));
    const stored = store.stored.get(idempotency.recordKey(OPERATION, 'tenant:1', req.key)) as string;
    expect(stored).toMatch(/^enc2:k1:/);
    expect(stored).not.toContain(MARKER);
    expect(stored).not.toContain('ch_1');
    const replay = await idempotency.run(req, neverRuns);
    expect(replay).toEqual({ value: first.value, replayed: true, waited: false });
    // The second replay comes from this process's memory: decrypted once, never stored in clear.
    expect(await idempotency.run(req, neverRuns)).toEqual(replay);
    expect(runs.count).toBe(1);
  });

  test('a waiting duplicate gets the answer decrypted', async () => {
    const idempotency = coordinator([K1]);
    const gate = latch();
    const req = request();
    const first = idempotency.run(req, async () => (await gate.promise, { note: MARKER }));
    const duplicate = idempotency.run(req, neverRuns);
    await new Promise((resolve) => setImmediate(resolve));
    gate.open();
    expect(await duplicate).toEqual({ value: { note: MARKER }, replayed: true, waited: true });
    expect((await first).replayed).toBe(false);
  });

  test('rotation: answers stored under k1 replay once k2 is added first; answers under k2 are unreadable where only k1 is known', async () => {
    const old = coordinator([K1], { replayCache: false });
    const rotated = coordinator([K2, K1], { replayCache: false });
    const runs = { count: 0 };
    const before = request();
    await old.run(before, charge(runs));
    expect((await rotated.run(before, neverRuns)).replayed).toBe(true);

    const after = request();
    await rotated.run(after, charge(runs));
    expect(store.stored.get(rotated.recordKey(OPERATION, 'tenant:1', after.key))).toMatch(/^enc2:k2:/);
    const error = await failure(old.run(after, neverRuns));
    expect(error).toBeInstanceOf(StoredAnswerUnreadableError);
    expect(isIdempotencyError(error, StoredAnswerUnreadableError)).toBe(true);
    expect((error as StoredAnswerUnreadableError).httpStatus).toBe(500);
    expect((error as Error).message).not.toContain('k2'); // the caller is told that, the logs why
    expect(runs.count).toBe(2);
  });

  test('an unreadable answer is reported with the hashed key and the reason, never cached, and replays once the keyring is put right', async () => {
    const writer = coordinator([K2]);
    const req = request();
    await writer.run(req, async () => ({ note: MARKER }));
    const reader = coordinator([K1]);
    recorder.events.length = 0;
    for (let i = 0; i < 2; i++)
      expect(isIdempotencyError(await failure(reader.run(req, neverRuns)), StoredAnswerUnreadableError)).toBe(true);
    expect(recorder.outcomes()).toEqual(['unreadable', 'unreadable']);
    const [event] = recorder.events;
    expect(event).toMatchObject({ service: 'payments', operation: OPERATION, keyHash: hashKey(req.key) });
    expect(String(event?.error)).toBe('UnreadableAnswer: the stored answer was encrypted under key "k2", which is not in the keyring');
    expect(JSON.stringify(recorder.events)).not.toContain(req.key);
    expect(reader.replayFromMemory(req)).toBeUndefined();

    const fixed = coordinator([K1, K2]);
    expect(await fixed.run(req, neverRuns)).toEqual({ value: { note: MARKER }, replayed: true, waited: false });
  });

  test('a wrong key under the same id is unreadable, and the action does not run again', async () => {
    await coordinator([K1]).run(request('wrong-key'), async () => ({ note: MARKER }));
    const impostor = coordinator([{ id: 'k1', key: randomBytes(32) }]);
    expect(isIdempotencyError(await failure(impostor.run(request('wrong-key'), neverRuns)), StoredAnswerUnreadableError)).toBe(true);
    expect(String(recorder.events.at(-1)?.error)).toMatch(/does not authenticate under key "k1"/);
  });

  test("an answer copied to another record, another tenant's or another key's, is unreadable", async () => {
    const idempotency = coordinator([K1]);
    const source = request();
    await idempotency.run(source, async () => ({ note: MARKER }));
    const sealed = store.stored.get(idempotency.recordKey(OPERATION, 'tenant:1', source.key)) as string;
    const targets = [
      { ...source, scope: 'tenant:2' },
      { ...source, key: `${source.key}-other` },
      { ...source, operation: 'payments.refund' },
    ];
    for (const target of targets) {
      const recordKey = idempotency.recordKey(target.operation, target.scope ?? '', target.key);
      await store.claim({ recordKey, fingerprint: 'fp-1', owner: 'forger', leaseMs: 10_000 });
      await store.complete(recordKey, 'forger', sealed, 60_000);
      expect(isIdempotencyError(await failure(idempotency.run(target, neverRuns)), StoredAnswerUnreadableError)).toBe(true);
    }
    expect(recorder.count('unreadable')).toBe(3);
  });

  test("the same record's earlier answer, put back once the key was used for another request, is unreadable", async () => {
    const idempotency = coordinator([K1], { replayCache: false });
    const earlier = request();
    await idempotency.run(earlier, async () => ({ note: MARKER }));
    const recordKey = idempotency.recordKey(OPERATION, 'tenant:1', earlier.key);
    const sealed = store.stored.get(recordKey) as string;
    // The record ends; the key comes back with another body (fp-2), and its record is completed with fp-1's answer.
    expect((await store.releaseByOperator(recordKey, { force: true })).outcome).toBe('forced');
    const later = { ...earlier, fingerprint: 'fp-2' };
    await store.claim({ recordKey, fingerprint: later.fingerprint, owner: 'forger', leaseMs: 10_000 });
    await store.complete(recordKey, 'forger', sealed, 60_000);
    expect(isIdempotencyError(await failure(idempotency.run(later, neverRuns)), StoredAnswerUnreadableError)).toBe(true);
    expect(String(recorder.events.at(-1)?.error)).toMatch(/another request/);
  });

  test('answers in clear are unreadable unless acceptPlaintext is set; encrypted answers are unreadable without keys', async () => {
    const plain = coordinator();
    const earlier = request();
    await plain.run(earlier, async () => ({ note: MARKER }));
    expect(store.stored.get(plain.recordKey(OPERATION, 'tenant:1', earlier.key))).toContain(MARKER);
    expect(isIdempotencyError(await failure(coordinator([K1]).run(earlier, neverRuns)), StoredAnswerUnreadableError)).toBe(true);
    expect(String(recorder.events.at(-1)?.error)).toMatch(/in clear, and only encrypted answers are accepted/);
    const migrating = coordinator([K1], { acceptPlaintext: true });
    expect(await migrating.run(earlier, neverRuns)).toMatchObject({ value: { note: MARKER }, replayed: true });

    const later = request();
    await migrating.run(later, async () => ({ note: MARKER }));
    expect(store.stored.get(plain.recordKey(OPERATION, 'tenant:1', later.key))).toMatch(/^enc2:k1:/);
    expect(
      isIdempotencyError(await failure(coordinator(undefined, { replayCache: false }).run(later, neverRuns)), StoredAnswerUnreadableError),
    ).toBe(true);
    expect(String(recorder.events.at(-1)?.error)).toMatch(/encrypted, and this coordinator has no encryption keys/);
  });

  test('a result that could not be stored is stored encrypted, and still answers ResultNotStoredError', async () => {
    const idempotency = coordinator([K1], { replayCache: false });
    const req = request();
    await idempotency.run(req, async () => ({ amount: BigInt(1) }));
    expect(store.stored.get(idempotency.recordKey(OPERATION, 'tenant:1', req.key))).toMatch(/^enc2:k1:/);
    expect(isIdempotencyError(await failure(idempotency.run(req, neverRuns)), ResultNotStoredError)).toBe(true);
  });

  test('refuses a keyring that could not work when it is built', () => {
    expect(() => coordinator([{ id: 'k1', key: randomBytes(16) }])).toThrow(
      new InvalidPolicyError('payments: encryption key "k1" must be 32 bytes for AES-256 (got 16)'),
    );
    expect(() => coordinator([])).toThrow(InvalidPolicyError);
  });
});
