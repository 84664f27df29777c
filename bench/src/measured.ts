import type { RoundTrips } from './endpoint-servers';
import type { LoadResult } from './load';
import { figure, type Figure } from './stats';

/**
 * One measured run, with the server's CPU time per request (kernel-counted,
 * µs) and, where the run read it, Redis's (`INFO cpu`, server-wide).
 */
export type MeasuredRun = LoadResult & { cpuUs: number; redisCpuUs?: number };

/** Every run of one variant, and the Redis commands one of its requests sends. */
export interface VariantRuns {
  runs: MeasuredRun[];
  roundTrips: RoundTrips;
}

/** A figure of a run: throughput, latency percentiles, server CPU per request, Redis CPU per request. */
export type Metric = 'rps' | 'p50' | 'p99' | 'cpuUs' | 'redisCpuUs';

/**
 * The runs of variants measured round by round. Comparisons are made run by
 * run (the same round, minutes apart at most) and only then summarised, so
 * the machine's load drifting between rounds cancels out.
 */
export class Measured {
  constructor(private readonly variants: ReadonlyMap<string, VariantRuns>) {}

  /** Median and spread of `metric` over the runs of `name`. */
  figure(name: string, metric: Metric = 'rps'): Figure {
    return figure(this.runs(name).map((run) => run[metric] ?? Number.NaN));
  }

  /** `a / b`, run by run. */
  ratio(a: string, b: string, metric: Metric = 'rps'): Figure {
    return this.pairwise(a, b, metric, (x, y) => x / y);
  }

  /** `a - b`, run by run. */
  difference(a: string, b: string, metric: Metric): Figure {
    return this.pairwise(a, b, metric, (x, y) => x - y);
  }

  roundTrips(name: string): RoundTrips {
    return this.get(name).roundTrips;
  }

  private pairwise(a: string, b: string, metric: Metric, combine: (x: number, y: number) => number): Figure {
    const others = this.runs(b);
    return figure(this.runs(a).map((run, i) => combine(run[metric] ?? Number.NaN, others[i]?.[metric] ?? Number.NaN)));
  }

  private runs(name: string): MeasuredRun[] {
    return this.get(name).runs;
  }

  private get(name: string): VariantRuns {
    const found = this.variants.get(name);
    if (!found) throw new Error(`no variant named ${name}`);
    return found;
  }
}
