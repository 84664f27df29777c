import { FAULT_KINDS, faultSchedule, faultsPerKind, strikesWanted, type ScheduleTimings } from './fault-schedule';
import { SeededRandom } from './seeded-random';

const TIMINGS: ScheduleTimings = {
  leaseMs: 1000,
  callerTimeoutMs: 3000,
  gatewayTimeoutMs: 600,
  ordersTimeoutMs: 300,
  commandTimeoutMs: 1000,
};

describe('faultSchedule', () => {
  it('is the same for the same seed: a failed soak replays its faults', () => {
    expect(faultSchedule(new SeededRandom(42), 100_000, TIMINGS)).toEqual(faultSchedule(new SeededRandom(42), 100_000, TIMINGS));
    expect(faultSchedule(new SeededRandom(42), 100_000, TIMINGS)).not.toEqual(faultSchedule(new SeededRandom(43), 100_000, TIMINGS));
  });

  it('plans over twenty faults of every kind in the default soak, in time order, inside the soak', () => {
    const schedule = faultSchedule(new SeededRandom(9), 100_000, TIMINGS);
    expect(faultsPerKind(100_000)).toBeGreaterThanOrEqual(20);
    for (const kind of FAULT_KINDS)
      expect({ kind, count: schedule.filter((f) => f.kind === kind).length }).toEqual({ kind, count: faultsPerKind(100_000) });
    expect(schedule.map((f) => f.atMs)).toEqual([...schedule.map((f) => f.atMs)].sort((a, b) => a - b));
    expect(schedule.every((f) => f.atMs > 0 && f.atMs <= 85_000)).toBe(true);
  });

  it('wants twenty strikes of each kind in the default soak, and tops up only the kinds it names', () => {
    expect(strikesWanted(faultsPerKind(100_000))).toBe(20);
    const topUp = faultSchedule(new SeededRandom(9), 10_000, TIMINGS, { kill: 3, leaseExpiry: 2 });
    expect(topUp.map((f) => f.kind).sort()).toEqual(['kill', 'kill', 'kill', 'leaseExpiry', 'leaseExpiry']);
    expect(topUp.every((f) => f.atMs > 0 && f.atMs <= 8_500)).toBe(true);
  });

  it('draws faults that do what their kind says: pauses past the command timeout, freezes past the lease, slow replies past the caller', () => {
    const schedule = faultSchedule(new SeededRandom(5), 100_000, TIMINGS);
    for (const f of schedule.filter((f) => f.kind === 'redisPause')) expect(f.ms).toBeGreaterThan(TIMINGS.commandTimeoutMs);
    for (const f of schedule.filter((f) => f.kind === 'leaseExpiry')) expect(f.ms).toBeGreaterThan(TIMINGS.leaseMs);
    for (const f of schedule.filter((f) => f.kind === 'slowFirstAttempt' && f.target === 'gateway'))
      expect(f.ms).toBeGreaterThan(TIMINGS.callerTimeoutMs);
    expect(new Set(schedule.filter((f) => f.kind === 'kill' || f.kind === 'term').map((f) => f.target))).toEqual(
      new Set(['orders', 'payments']),
    );
  });
});
