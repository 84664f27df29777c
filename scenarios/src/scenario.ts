import type { LabEvent } from './timeline';

/** One line of the payments ledger, as the runner reads it. */
export interface LedgerLine {
  chargeId: string;
  epoch: number;
  at: string;
}

/** One side of a side-by-side: the naive approach, or ours. */
export interface VariantRun {
  /** e.g. `naive: no key` or `ours: propagated key, Redis`. */
  variant: string;
  charges: number;
  /** What this variant must produce; CI asserts `charges === expectedCharges`. */
  expectedCharges: number;
  /** What the callers got, in a sentence made from the recorded answers. */
  outcome: string;
  /** Machine-readable extras (status counts, metrics read after the run). */
  details: Record<string, unknown>;
  durationMs: number;
  events: LabEvent[];
  ledger: LedgerLine[];
}

/** A failure scenario, run as its naive and its protected variants. */
export interface ScenarioResult {
  id: string;
  title: string;
  /** What breaks, what fixes it, and the line of code that makes it so. */
  broke: string;
  fix: string;
  code: string;
  store: 'redis' | 'memory';
  variants: VariantRun[];
  /** Set when the machine lacks a component the scenario needs; nothing ran. */
  skipped?: string;
}

/** What every scenario is given. */
export interface ScenarioContext {
  store: 'redis' | 'memory';
  redisUrl?: string;
  log: (line: string) => void;
}

/** A scenario the runner knows. */
export interface Scenario {
  id: string;
  title: string;
  run(context: ScenarioContext): Promise<ScenarioResult>;
}
