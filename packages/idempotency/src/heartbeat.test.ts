import { heartbeat, type Beating } from './heartbeat';

describe('heartbeat', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  const member = (beats: number[]): Beating => {
    const m: Beating = {
      lastBeatAt: performance.now(),
      beat: () => {
        beats.push(performance.now());
        m.lastBeatAt = performance.now();
      },
    };
    return m;
  };

  it('renews a long execution no later than one interval after its claim or last renewal', () => {
    const beats: number[] = [];
    const started = performance.now();
    vi.advanceTimersByTime(137); // the shared timer's phase is unrelated to the claim
    const long = member(beats);
    const claimedAt = performance.now();
    const membership = heartbeat(1_000).add(long);
    vi.advanceTimersByTime(10_000);
    membership.leave();

    const gaps = [beats[0]! - claimedAt, ...beats.slice(1).map((at, i) => at - beats[i]!)];
    expect(beats.length).toBeGreaterThanOrEqual(10);
    for (const gap of gaps) expect(gap).toBeLessThanOrEqual(1_000);
    expect(claimedAt).toBeGreaterThan(started);
  });

  it('never renews an execution that ends within half an interval', () => {
    const beats: number[] = [];
    const short = member(beats);
    const membership = heartbeat(2_000).add(short);
    vi.advanceTimersByTime(400);
    membership.leave();
    vi.advanceTimersByTime(10_000);
    expect(beats).toEqual([]);
  });

  it('keeps one timer for all its executions, and stops it once nobody is left', () => {
    const a = member([]);
    const b = member([]);
    const memberships = [heartbeat(3_000).add(a), heartbeat(3_000).add(b)];
    expect(vi.getTimerCount()).toBe(1);
    for (const membership of memberships) membership.leave();
    vi.advanceTimersByTime(1_500);
    expect(vi.getTimerCount()).toBe(0);
  });
});
