import { MemoryStore } from './memory-store';
import { describeOperatorRecords } from './operator-records.test-support';
import { inspectRecord, releaseRecord } from './operator-records';
import type { IdempotencyStore } from './store';

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
