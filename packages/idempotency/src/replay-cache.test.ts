import { retainedBytes } from '../test/support/heap';
import { ReplayCache } from './replay-cache';

describe('ReplayCache', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('keeps a completed record a little less long than the store does', () => {
    const cache = new ReplayCache();
    cache.set('a', 'fp', 'result', 20_000);
    vi.advanceTimersByTime(18_999);
    expect(cache.get('a')).toEqual(expect.objectContaining({ fingerprint: 'fp', result: 'result' }));
    vi.advanceTimersByTime(2);
    expect(cache.get('a')).toBeUndefined(); // a second before the store's end
    cache.set('b', 'fp', 'result', 500);
    vi.advanceTimersByTime(451);
    expect(cache.get('b')).toBeUndefined(); // a tenth before, for short retentions
  });

  it('replays from memory for maxAgeMs at most (60 s by default), then leaves the next replay to the store', () => {
    const byDefault = new ReplayCache();
    byDefault.set('a', 'fp', 'result', 24 * 3_600_000);
    vi.advanceTimersByTime(59_999);
    expect(byDefault.get('a')?.result).toBe('result');
    vi.advanceTimersByTime(2);
    expect(byDefault.get('a')).toBeUndefined(); // what an operator's forced release is seen after, at the latest

    const short = new ReplayCache({ maxAgeMs: 500 });
    short.set('a', 'fp', 'result', 60_000);
    vi.advanceTimersByTime(499);
    expect(short.get('a')?.result).toBe('result');
    vi.advanceTimersByTime(2);
    expect(short.get('a')).toBeUndefined();
    expect(() => new ReplayCache({ maxAgeMs: 0 })).toThrow(RangeError);
  });

  it('keeps an answer the store never took for its retention, not maxAgeMs: there is nothing in the store to ask', () => {
    const cache = new ReplayCache({ maxAgeMs: 500 });
    cache.setUnstored('a', 'fp', 'result', 20_000);
    vi.advanceTimersByTime(18_999);
    expect(cache.get('a')?.result).toBe('result');
    vi.advanceTimersByTime(2);
    expect(cache.get('a')).toBeUndefined(); // a second before the retention it was meant for
  });

  it('drops the oldest records past its count or its size', () => {
    const byCount = new ReplayCache({ maxEntries: 2 });
    for (const key of ['a', 'b', 'c']) byCount.set(key, 'fp', key, 60_000);
    expect(['a', 'b', 'c'].map((key) => byCount.get(key)?.result)).toEqual([undefined, 'b', 'c']);

    const bySize = new ReplayCache({ maxChars: 10 });
    bySize.set('a', 'fp', '12345', 60_000);
    bySize.set('b', 'fp', '123456', 60_000);
    bySize.set('c', 'fp', 'x'.repeat(11), 60_000); // larger than the whole cache: not kept
    expect(['a', 'b', 'c'].map((key) => bySize.get(key)?.result)).toEqual([undefined, '123456', undefined]);
  });

  it('counts the names of its records in its size: 10,000 names of 100 kB each stay within maxChars', async () => {
    const maxChars = 16 * 1024 * 1024;
    const cache = new ReplayCache({ maxChars });
    const retained = await retainedBytes(() => {
      // Names that hold a 100 kB scope each, every one its own string (written in a buffer: faster than building it).
      const name = Buffer.from(`0000000000 ${'x'.repeat(100_000)}`, 'latin1');
      for (let i = 0; i < 10_000; i++) {
        name.write(String(i).padStart(10, '0'), 0, 'latin1');
        cache.set(name.toString('latin1'), 'f'.repeat(64), '{"status":201,"headers":{}}\n{"refund":1}', 60_000);
      }
    });

    expect(cache.chars).toBeLessThanOrEqual(maxChars);
    // One byte per character of these strings; twice the bound leaves room for the rest of the heap.
    expect(retained).toBeLessThan(2 * maxChars);
  });
});
