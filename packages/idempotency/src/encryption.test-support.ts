/**
 * Encryption at rest, read back from a real store: the same cases for
 * Redis, Redis Cluster and PostgreSQL, each reading the record as the store
 * keeps it (a hash, a row) and writing to it behind the coordinator's back.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';
import { readRecord, replaceResult } from './redis/redis.test-support';
import { redisRecordKey } from './redis/redis-store';
import { IdempotencyCoordinator, type RunRequest } from './coordinator';
import type { AnswerEncryptionKey } from './encryption-keys';
import { isIdempotencyError, KeyReusedError, StoredAnswerUnreadableError } from './errors';
import type { IdempotencyObserver } from './observer';
import { inspectRecord, releaseRecord } from './operator-records';
import type { IdempotencyStore } from './store';

/** A store under test, and its records as the store keeps them. */
export interface RawRecords {
  store: IdempotencyStore;
  /** Every field of the record at `recordKey`, as stored. */
  read(recordKey: string): Promise<Record<string, string | null>>;
  /** The stored answer of the record at `recordKey`, as stored (the ciphertext, when encrypted). */
  readResult(recordKey: string): Promise<string>;
  /** Overwrite the stored answer of the completed record at `recordKey`, as someone with access to the store could. */
  writeResult(recordKey: string, result: string): Promise<void>;
}

/**
 * A Redis record as `RedisStore` keeps it under `prefix`, read and written
 * raw: the one place these tests reach the record's layout (through
 * `readRecord` and `replaceResult`), for a single node and a cluster alike.
 */
export function redisRawRecords(client: Redis | Cluster, prefix: string): Omit<RawRecords, 'store'> {
  const redisKey = (recordKey: string) => redisRecordKey(recordKey, prefix);
  return {
    read: async (recordKey) => (await readRecord(client, redisKey(recordKey))) ?? {},
    readResult: async (recordKey) => {
      const result = (await readRecord(client, redisKey(recordKey)))?.result;
      if (result === undefined) throw new Error(`no stored answer at ${recordKey}`);
      return result;
    },
    writeResult: (recordKey, result) => replaceResult(client, redisKey(recordKey), result),
  };
}

export const K1: AnswerEncryptionKey = { id: 'k1', key: randomBytes(32) };
const K2: AnswerEncryptionKey = { id: 'k2', key: randomBytes(32) };
/** Distinctive bytes of an answer's body and of one of its headers: none may be found in the store. */
export const BODY_MARKER = 'BODYMARK-c41f9e';
export const HEADER_MARKER = 'HDRMARK-77b0d2';

const OPERATION = 'payments.charge';
const SCOPE = 'tenant:acme';
const FINGERPRINT = 'fingerprint-6d1c';
const ANSWER = {
  statusCode: 201,
  headers: { location: `/charges/${HEADER_MARKER}` },
  body: { chargeId: 'ch_1', cardLast4: '4242', holder: BODY_MARKER },
};

/** One idempotency key used for two request bodies, one after the other (see {@link reuseKeyForAnotherBody}). */
export interface ReusedKey {
  /** The request with body 1, answered first. */
  first: RunRequest;
  /** The request with body 2, answered after the first one's record ended. */
  second: RunRequest;
  recordKey: string;
  /** The first request's answer as the store kept it: the ciphertext someone could put back. */
  earlier: string;
}

/**
 * The same key used for two bodies: `execute` answers body 1 (fingerprint
 * `fingerprint-body-1`), its record ends (its retention runs out; here an
 * operator's forced release, so that no test waits on a clock), and
 * `execute` answers body 2 under the same record key. The record then
 * carries body 2's fingerprint; body 1's stored answer is returned, for a
 * test to put back as someone with write access to the store could.
 */
export async function reuseKeyForAnotherBody(
  records: RawRecords,
  idempotency: IdempotencyCoordinator,
  execute: (request: RunRequest) => Promise<unknown>,
): Promise<ReusedKey> {
  const first: RunRequest = { operation: OPERATION, key: `key-${randomUUID()}`, scope: SCOPE, fingerprint: 'fingerprint-body-1' };
  const second: RunRequest = { ...first, fingerprint: 'fingerprint-body-2' };
  const recordKey = idempotency.recordKey(OPERATION, SCOPE, first.key);
  await execute(first);
  const earlier = await records.readResult(recordKey);
  expect((await releaseRecord(records.store, { recordKey }, { force: true, reason: 'its retention ran out' })).outcome).toBe('forced');
  await execute(second);
  expect(Object.values(await records.read(recordKey))).toEqual(
    expect.arrayContaining(['completed', kept(records.store, second.fingerprint)]),
  );
  expect(await records.readResult(recordKey)).not.toBe(earlier);
  return { first, second, recordKey, earlier };
}

/** `fingerprint` as `store`'s records keep it (see `IdempotencyStore.keptFingerprint`). */
const kept = (store: IdempotencyStore, fingerprint: string): string => store.keptFingerprint?.(fingerprint) ?? fingerprint;

/**
 * `store` behind a wrapper of an app's own (metrics, tracing) that forwards
 * every operation but not the optional `keptFingerprint`.
 */
const withoutKeptFingerprint = (store: IdempotencyStore): IdempotencyStore =>
  new Proxy(store, {
    get(target, property) {
      if (property === 'keptFingerprint') return undefined;
      const value = Reflect.get(target, property) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });

/** The answer to a request of {@link reuseKeyForAnotherBody}: its body names the fingerprint. */
export const answerTo = (request: RunRequest) => ({
  statusCode: 201,
  body: { chargeId: `ch_${request.fingerprint}`, holder: BODY_MARKER },
});

const neverRuns = async (): Promise<never> => {
  throw new Error('this action must not run');
};
/** What `promise` rejects with, or `undefined` when it resolves. */
export const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (error: unknown) => error,
  );

/** The encryption-at-rest cases against the store `records()` returns once `beforeAll` has run. */
export function describeEncryptionAtRest(name: string, records: () => RawRecords): void {
  describe(`encryption at rest: ${name}`, () => {
    const coordinator = (keys?: AnswerEncryptionKey[], observer?: IdempotencyObserver) =>
      new IdempotencyCoordinator({
        service: 'payments',
        store: records().store,
        replayCache: false,
        observer,
        ...(keys && { encryption: { keys } }),
      });
    const request = (): RunRequest => ({ operation: OPERATION, key: `key-${randomUUID()}`, scope: SCOPE, fingerprint: FINGERPRINT });
    const recordKey = (req: RunRequest) => coordinator().recordKey(req.operation, req.scope ?? '', req.key);

    test("the stored record holds none of the answer's bytes, and the state, epoch and fingerprint the store needs", async () => {
      const req = request();
      const first = await coordinator([K1]).run(req, async () => ANSWER);
      const raw = await records().read(recordKey(req));
      const text = JSON.stringify(raw);
      // Only strings a hex key or a base64 ciphertext cannot hold by chance: '4242' alone sometimes is in a random key.
      for (const secret of [BODY_MARKER, HEADER_MARKER, 'chargeId', 'cardLast4', '/charges/']) expect(text).not.toContain(secret);
      expect(Object.values(raw)).toEqual(expect.arrayContaining(['completed', kept(records().store, FINGERPRINT)]));
      expect(Object.values(raw).filter((value) => value?.startsWith('enc2:k1:'))).toHaveLength(1);
      expect(first.epoch).toBeGreaterThan(0);
      expect(Object.values(raw)).toContain(String(first.epoch));
      // The same answer stored in clear, for contrast: the markers are what a reader of the store would see.
      const plain = request();
      await coordinator().run(plain, async () => ANSWER);
      const clear = JSON.stringify(await records().read(recordKey(plain)));
      expect(clear).toContain(BODY_MARKER);
      expect(clear).toContain(HEADER_MARKER);
      expect(await coordinator([K1]).run(req, neverRuns)).toEqual({ value: ANSWER, replayed: true, waited: false });
    });

    test('rotation: answers under k1 replay once k2 is added first; an answer under k2 is unreadable with only k1', async () => {
      const before = request();
      await coordinator([K1]).run(before, async () => ANSWER);
      expect((await coordinator([K2, K1]).run(before, neverRuns)).value).toEqual(ANSWER);
      const after = request();
      await coordinator([K2, K1]).run(after, async () => ANSWER);
      expect(Object.values(await records().read(recordKey(after))).some((value) => value?.startsWith('enc2:k2:'))).toBe(true);
      expect(isIdempotencyError(await failure(coordinator([K1]).run(after, neverRuns)), StoredAnswerUnreadableError)).toBe(true);
      expect((await coordinator([K2]).run(after, neverRuns)).value).toEqual(ANSWER);
    });

    test('adding or removing a store wrapper that does not forward keptFingerprint, in a deploy, leaves every answer readable', async () => {
      const behindWrapper = new IdempotencyCoordinator({
        service: 'payments',
        store: withoutKeptFingerprint(records().store),
        replayCache: false,
        encryption: { keys: [K1] },
      });
      const operator = { body: true, encryption: { keys: [K1] } };
      const sealedBehind = request();
      await behindWrapper.run(sealedBehind, async () => ANSWER);
      expect((await coordinator([K1]).run(sealedBehind, neverRuns)).value).toEqual(ANSWER);
      const sealedBare = request();
      await coordinator([K1]).run(sealedBare, async () => ANSWER);
      expect((await behindWrapper.run(sealedBare, neverRuns)).value).toEqual(ANSWER);
      expect((await inspectRecord(records().store, { recordKey: recordKey(sealedBare) }, operator)).answer?.status).toBe('decrypted');
    });

    test('a wrong key is unreadable, and reported as such', async () => {
      const req = request();
      await coordinator([K1]).run(req, async () => ANSWER);
      const outcomes: string[] = [];
      const wrong = coordinator([{ id: 'k1', key: randomBytes(32) }], { record: (event) => outcomes.push(event.outcome) });
      expect(isIdempotencyError(await failure(wrong.run(req, neverRuns)), StoredAnswerUnreadableError)).toBe(true);
      expect(outcomes).toEqual(['unreadable']);
    });

    test("an answer copied into another record, another tenant's, is unreadable there and still readable where it was", async () => {
      const source = request();
      await coordinator([K1]).run(source, async () => ANSWER);
      const target = { ...request(), scope: 'tenant:other' };
      await coordinator([K1]).run(target, async () => ({ statusCode: 201, body: { chargeId: 'ch_2' } }));
      const sealed = await records().readResult(recordKey(source));
      await records().writeResult(recordKey(target), sealed);
      expect(isIdempotencyError(await failure(coordinator([K1]).run(target, neverRuns)), StoredAnswerUnreadableError)).toBe(true);
      expect((await coordinator([K1]).run(source, neverRuns)).value).toEqual(ANSWER);
    });

    test("the same record's earlier answer, to another body, put back is unreadable: never replayed for the current request", async () => {
      const { first, second, recordKey, earlier } = await reuseKeyForAnotherBody(records(), coordinator([K1]), (req) =>
        coordinator([K1]).run(req, async () => answerTo(req)),
      );
      const operator = { body: true, encryption: { keys: [K1] } };
      expect((await inspectRecord(records().store, { recordKey }, operator)).answer).toMatchObject({
        status: 'decrypted',
        body: JSON.stringify(answerTo(second)),
      });

      await records().writeResult(recordKey, earlier);
      const outcomes: string[] = [];
      const replica = coordinator([K1], { record: (event) => outcomes.push(event.outcome) });
      expect(isIdempotencyError(await failure(replica.run(second, neverRuns)), StoredAnswerUnreadableError)).toBe(true);
      expect(outcomes).toEqual(['unreadable']);
      const inspected = await inspectRecord(records().store, { recordKey }, operator);
      expect(inspected.answer).toMatchObject({ status: 'unreadable', reason: expect.stringContaining('does not authenticate') });
      expect(inspected.answer?.body).toBeUndefined();
      // The record is body 2's: body 1's request is a key reused, not a replay of the answer put back.
      expect(isIdempotencyError(await failure(replica.run(first, neverRuns)), KeyReusedError)).toBe(true);
    });

    test('a tampered answer is unreadable', async () => {
      const req = request();
      await coordinator([K1]).run(req, async () => ANSWER);
      const sealed = await records().readResult(recordKey(req));
      const bytes = Buffer.from(sealed.slice('enc2:k1:'.length), 'base64');
      bytes[20] = (bytes[20] as number) ^ 0x20;
      await records().writeResult(recordKey(req), `enc2:k1:${bytes.toString('base64')}`);
      expect(isIdempotencyError(await failure(coordinator([K1]).run(req, neverRuns)), StoredAnswerUnreadableError)).toBe(true);
    });
  });
}
