/**
 * How long and how often each figure is measured. The defaults keep the whole
 * run near five minutes on a two-core machine; `BENCH_QUICK=1` is for working
 * on the benchmark itself (one short run per figure, no BENCHMARKS.md).
 */
import { cpus } from 'node:os';

const quick = process.env.BENCH_QUICK === '1';
/** With two cores or more, the HTTP servers and their load generator each get one of their own (`taskset`). */
const pinned = cpus().length >= 2;

export const SETTINGS = {
  quick,
  /** Runs per figure; every figure reported is the median of these. */
  runs: quick ? 1 : 3,
  /**
   * autocannon: fixed concurrency; rounds (each runs every variant once, so
   * more and shorter runs beat fewer and longer ones on a noisy machine);
   * warm-up before a variant's first run, and a shorter one before each later run.
   */
  connections: 32,
  httpRuns: quick ? 1 : 5,
  warmupS: 1,
  rewarmS: 0.5,
  durationS: 2,
  /**
   * Where the HTTP servers and autocannon run: each a process of its own,
   * pinned to different cores, so the load generator never takes the
   * server's core (Redis, PostgreSQL and the rest of the machine still
   * float over both).
   */
  serverCpus: pinned ? '0' : undefined,
  loadCpus: pinned ? '1' : undefined,
  /**
   * Per transport (section 12): messages in flight, rounds, and seconds per
   * run (after the first warm-up, a shorter one before each later run).
   */
  transportInFlight: 32,
  transportRuns: quick ? 1 : 3,
  transportDurationS: quick ? 0.5 : 1,
  transportRewarmS: 0.25,
  /** Sequential requests per variant over which its Redis commands are counted. */
  roundTripSample: quick ? 50 : 200,
  /** In-process store loops: seconds per run. */
  storeRunS: quick ? 1 : 2,
  storeConcurrency: [1, 16, 64],
  /** Waiters per trial, and trials per run for each count. */
  waiterCounts: [1, 10, 100],
  waiterTrials: { 1: quick ? 5 : 30, 10: quick ? 3 : 10, 100: quick ? 2 : 4 } as Record<number, number>,
  /** End-to-end replays timed per run. */
  e2eReplays: quick ? 100 : 300,
  e2ePorts: { gateway: 3200, orders: 3201, payments: 3202 },
  /** Memory churn: distinct keys and their retention. */
  churnKeys: quick ? 200_000 : 1_000_000,
  churnRetentionMs: 1000,
};
