import { figure, median, percentile, ratio } from './stats';

describe('stats', () => {
  test('median of odd and even counts, and of nothing', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([])).toBeNaN();
  });

  test('percentiles interpolate between closest ranks', () => {
    const samples = Array.from({ length: 101 }, (_, i) => i);
    expect(percentile(samples, 50)).toBe(50);
    expect(percentile(samples, 99)).toBe(99);
    expect(percentile([1, 2], 50)).toBe(1.5);
    expect(percentile([7], 99)).toBe(7);
  });

  test('a figure keeps its runs and spread; ratios use medians', () => {
    const f = figure([10, 30, 20]);
    expect(f).toEqual({ median: 20, min: 10, max: 30, runs: [10, 30, 20] });
    expect(ratio(f, 10)).toBe(2);
  });
});
