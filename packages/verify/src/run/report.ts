import type { Violation } from '../invariants/check';
import type { Attempt } from '../proxy/attempt';
import type { Press } from './caller';
import type { SkippedScenario } from '../scenarios/catalog';
import type { EffectExpectation } from '../scenarios/scenario';

/**
 * One intent of a scenario as reports show it. Keys appear only hashed.
 *
 * @public
 */
export interface IntentReport {
  intentId: string;
  keyHash: string | null;
  expected: EffectExpectation;
  /** Effects counted once the chain settled. */
  effects: number;
  presses: PressReport[];
}

/**
 * One press and the caller's attempts.
 *
 * @public
 */
export interface PressReport {
  label: string;
  answers: { attempt: number; status: number | null; error?: string }[];
}

/**
 * One scenario's outcome.
 *
 * @public
 */
export interface ScenarioReport {
  name: string;
  description: string;
  passed: boolean;
  durationMs: number;
  intents: IntentReport[];
  violations: Violation[];
  /** Every attempt the proxies saw during the scenario. */
  attempts: Attempt[];
  /** Set when the scenario could not run to its end (a count failed, the chain never settled). */
  error?: string;
  /**
   * Faults the scenario planned that did not take effect, each naming the setting to
   * change (a hold no caller waited out, a reset at a hop no attempt reached): set,
   * the scenario fails, since it tested nothing.
   */
  notExercised?: string[];
}

/**
 * The whole run: what the JSON report holds and every other report is drawn from.
 *
 * @public
 */
export interface RunReport {
  /** The config file verified. */
  config: string;
  startedAt: string;
  durationMs: number;
  passed: boolean;
  /** Hop names, entry side first. */
  hops: string[];
  scenarios: ScenarioReport[];
  /** Scenarios of the default catalog this config cannot run, each with what it lacks. */
  skipped: SkippedScenario[];
}

/** A press as reports show it: statuses and errors, no bodies (they may hold personal data). */
export function pressReport(press: Press): PressReport {
  return {
    label: press.label,
    answers: press.answers.map(({ attempt, status, error }) => ({ attempt, status, ...(error ? { error } : {}) })),
  };
}
