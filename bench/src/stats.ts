/** Small statistics for benchmark runs: medians of runs, percentiles of samples. */

/** The median of `values` (the mean of the two middle ones for an even count). */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

/** The `p`-th percentile (0-100) of `samples`, linearly interpolated between closest ranks. */
export function percentile(samples: readonly number[] | Float64Array, p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = Float64Array.from(samples).sort();
  const rank = (p / 100) * (sorted.length - 1);
  const low = Math.floor(rank);
  const high = Math.ceil(rank);
  return (sorted[low] as number) + ((sorted[high] as number) - (sorted[low] as number)) * (rank - low);
}

/** Median and spread of one figure across runs. */
export interface Figure {
  median: number;
  min: number;
  max: number;
  runs: number[];
}

export function figure(runs: readonly number[]): Figure {
  return { median: median(runs), min: Math.min(...runs), max: Math.max(...runs), runs: [...runs] };
}

/** `a / b` of two figures' medians. */
export const ratio = (a: Figure | number, b: Figure | number): number =>
  (typeof a === 'number' ? a : a.median) / (typeof b === 'number' ? b : b.median);

/** Format helpers for tables. */
export const fmt = {
  int: (n: number): string => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : 'n/a'),
  ms: (n: number, digits = 2): string => (Number.isFinite(n) ? `${n.toFixed(digits)} ms` : 'n/a'),
  ratio: (n: number): string => (Number.isFinite(n) ? `${n.toFixed(2)}x` : 'n/a'),
  pct: (n: number): string => (Number.isFinite(n) ? `${(n * 100).toFixed(0)} %` : 'n/a'),
  /** `+12` / `-3.50`: a difference, signed. */
  signed: (n: number, digits = 0): string => (Number.isFinite(n) ? `${n >= 0 ? '+' : ''}${n.toFixed(digits)}` : 'n/a'),
  mb: (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MB`,
  /** `median (min-max)` of a figure. */
  spread: (f: Figure, one: (n: number) => string): string => `${one(f.median)} (${one(f.min)}-${one(f.max)})`,
};

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
