import { Measured, type MeasuredRun } from './measured';

const run = (rps: number, cpuUs: number): MeasuredRun => ({ rps, cpuUs, p50: 1, p99: 2, total: rps, failures: 0, statusCodes: {} });
const trips = { perRequest: 0, byName: {} };

describe('Measured', () => {
  // Round 2 ran on a busy machine: both variants slowed down together.
  const m = new Measured(
    new Map([
      ['bare', { runs: [run(1000, 100), run(400, 300), run(900, 110)], roundTrips: trips }],
      ['guarded', { runs: [run(800, 150), run(320, 360), run(630, 170)], roundTrips: { perRequest: 2, byName: { evalsha: 400 } } }],
    ]),
  );

  test('ratios are taken run by run, then summarised', () => {
    const r = m.ratio('guarded', 'bare');
    expect(r.runs).toEqual([0.8, 0.8, 0.7]);
    expect(r.median).toBeCloseTo(0.8);
    // The ratio of the medians would mix rounds: 630 / 900.
    expect(m.figure('guarded').median / m.figure('bare').median).toBeCloseTo(0.7);
  });

  test('differences too, for any metric', () => {
    expect(m.difference('guarded', 'bare', 'cpuUs').runs).toEqual([50, 60, 60]);
    expect(m.difference('guarded', 'bare', 'cpuUs').median).toBe(60);
  });

  test('round trips are kept per variant, and an unknown variant is an error', () => {
    expect(m.roundTrips('guarded').perRequest).toBe(2);
    expect(() => m.figure('peer')).toThrow('no variant named peer');
  });
});
