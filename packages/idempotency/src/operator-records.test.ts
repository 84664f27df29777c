import { randomBytes } from 'node:crypto';
import { AnswerEncryption } from './answer-encryption';
import { encryptingStore } from './encrypting-store';
import { MemoryStore } from './memory-store';
import { describeOperatorRecords } from './operator-records.test-support';
import { inspectRecord, releaseRecord } from './operator-records';
import { isInspectableStore, type IdempotencyStore } from './store';

const store = new MemoryStore();
afterAll(() => store.close());

describeOperatorRecords('MemoryStore', () => store);

describe('the operator API on a store without the operator interface', () => {
  test('refuses with a TypeError naming what is missing, rather than guessing', async () => {
    const noop = async () => undefined;
    const bare = {
      claim: noop,
      complete: noop,
      release: noop,
      renew: noop,
      waitForChange: noop,
      close: noop,
    } as unknown as IdempotencyStore;
    await expect(inspectRecord(bare, { recordKey: 'a'.repeat(64) })).rejects.toThrow(/InspectableStore/);
    await expect(releaseRecord(bare, { recordKey: 'a'.repeat(64) })).rejects.toThrow(TypeError);
  });
});

describe('the encrypting wrapper the coordinator puts around its store', () => {
  test('keeps the operator interface: inspect reads the answer as stored (sealed), release reaches the store', async () => {
    const inner = new MemoryStore();
    const wrapped = encryptingStore(inner, new AnswerEncryption({ keys: [{ id: 'w1', key: randomBytes(32) }] }, 'test'));
    try {
      expect(isInspectableStore(wrapped)).toBe(true);
      const recordKey = 'b'.repeat(64);
      const claim = await wrapped.claim({ recordKey, fingerprint: 'fp', owner: 'o', leaseMs: 60_000 });
      expect(await wrapped.complete(recordKey, 'o', '{"ok":true}', 60_000)).toBe(true);
      const found = await inspectRecord(wrapped, { recordKey });
      expect(found).toMatchObject({
        status: 'completed',
        epoch: claim.status === 'claimed' ? claim.epoch : -1,
        answer: { status: 'encrypted' },
      });
      expect((await releaseRecord(wrapped, { recordKey }, { force: true })).outcome).toBe('forced');
      expect(await inner.inspect(recordKey)).toBeUndefined();
    } finally {
      await inner.close();
    }
  });
});
