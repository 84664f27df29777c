import { getEventListeners } from 'node:events';
import { MemoryStore } from './memory-store';

let store: MemoryStore;

beforeEach(() => {
  vi.useFakeTimers();
  store = new MemoryStore({ sweepIntervalMs: 1_000 });
});
afterEach(async () => {
  await store.close();
  vi.useRealTimers();
});

const claim = (recordKey: string, leaseMs = 60_000, owner = 'owner') => store.claim({ recordKey, fingerprint: 'fp', owner, leaseMs });
/** Waiters the store still holds, across every key. */
const parkedWaiters = () => (store as unknown as { waiters: Map<string, Set<unknown>> }).waiters.size;
const SWEEPER = 1;

describe('MemoryStore sweep', () => {
  it('removes lapsed leases and expired results, and keeps live records until they expire', async () => {
    await claim('lapsed', 500);
    await claim('completed', 500);
    await store.complete('completed', 'owner', '"done"', 800);
    await claim('live', 5_000);
    expect(store.size).toBe(3);

    vi.advanceTimersByTime(1_000);
    expect(store.size).toBe(1);
    vi.advanceTimersByTime(5_000);
    expect(store.size).toBe(0);
  });

  it('stops sweeping after close()', async () => {
    await store.close();
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe('MemoryStore claims', () => {
  it('seeds epochs from the clock and still increases them within one millisecond', async () => {
    const now = Date.now();
    const first = await claim('a');
    const second = await claim('b');
    expect(first).toEqual({ status: 'claimed', epoch: now });
    expect(second).toEqual({ status: 'claimed', epoch: now + 1 });
  });

  it('reports the lease remaining on an in-progress record', async () => {
    await claim('key', 1_000);
    vi.advanceTimersByTime(400);
    expect(await claim('key', 1_000, 'other')).toEqual({ status: 'in_progress', fingerprint: 'fp', leaseRemainingMs: 600 });
  });
});

describe('MemoryStore waiters', () => {
  it('wakes every waiter on completion and leaves no timer, listener or waiter behind', async () => {
    await claim('key');
    const caller = new AbortController();
    const waits = [
      store.waitForChange('key', 10_000, caller.signal),
      store.waitForChange('key', 10_000),
      store.waitForChange('key', 10_000),
    ];
    expect(vi.getTimerCount()).toBe(SWEEPER + 3);
    expect(getEventListeners(caller.signal, 'abort')).toHaveLength(1);
    expect(parkedWaiters()).toBe(1);

    await store.complete('key', 'owner', '"done"', 60_000);
    await Promise.all(waits);
    expect(vi.getTimerCount()).toBe(SWEEPER);
    expect(getEventListeners(caller.signal, 'abort')).toHaveLength(0);
    expect(parkedWaiters()).toBe(0);
  });

  it('wakes waiters on release', async () => {
    await claim('key');
    const wait = store.waitForChange('key', 10_000);
    await store.release('key', 'owner');
    await wait;
    expect(vi.getTimerCount()).toBe(SWEEPER);
    expect(parkedWaiters()).toBe(0);
  });

  it('resolves a waiter at its timeout and cleans it up', async () => {
    await claim('key');
    const caller = new AbortController();
    let woken = false;
    const wait = store.waitForChange('key', 1_000, caller.signal).then(() => (woken = true));
    vi.advanceTimersByTime(999);
    await Promise.resolve();
    expect(woken).toBe(false);
    vi.advanceTimersByTime(1);
    await wait;
    expect(vi.getTimerCount()).toBe(SWEEPER);
    expect(getEventListeners(caller.signal, 'abort')).toHaveLength(0);
    expect(parkedWaiters()).toBe(0);
  });

  it('resolves a waiter whose signal aborts, leaving the others parked', async () => {
    await claim('key');
    const caller = new AbortController();
    const aborted = store.waitForChange('key', 10_000, caller.signal);
    const other = store.waitForChange('key', 10_000);
    caller.abort();
    await aborted;
    expect(vi.getTimerCount()).toBe(SWEEPER + 1);
    expect(getEventListeners(caller.signal, 'abort')).toHaveLength(0);
    expect(parkedWaiters()).toBe(1);
    await store.complete('key', 'owner', '"done"', 60_000);
    await other;
    expect(parkedWaiters()).toBe(0);
  });

  it('resolves at once, without parking, when nothing is in progress or the signal already aborted', async () => {
    await store.waitForChange('absent', 10_000);
    await claim('done');
    await store.complete('done', 'owner', '"done"', 60_000);
    await store.waitForChange('done', 10_000);
    await claim('busy');
    await store.waitForChange('busy', 10_000, AbortSignal.abort());
    expect(vi.getTimerCount()).toBe(SWEEPER);
    expect(parkedWaiters()).toBe(0);
  });

  it('wakes every waiter on close()', async () => {
    await claim('a');
    await claim('b');
    const waits = [store.waitForChange('a', 60_000), store.waitForChange('b', 60_000)];
    await store.close();
    await Promise.all(waits);
    expect(vi.getTimerCount()).toBe(0);
    expect(parkedWaiters()).toBe(0);
  });
});
