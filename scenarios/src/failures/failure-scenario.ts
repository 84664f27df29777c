import type { Scenario, ScenarioContext, ScenarioResult, VariantRun } from '../scenario';

/** What a failure scenario says once, whatever its variants find. */
export interface FailureScenario {
  id: string;
  title: string;
  /** What breaks, what fixes it, and the line of code that makes it so (see `codeRef`). */
  broke: string;
  fix: string;
  code: string;
  /** Why the scenario cannot run in `context` (a store or broker it lacks), or undefined when it can. */
  unavailable?(context: ScenarioContext): string | undefined | Promise<string | undefined>;
  /** Run every variant, naive first, each on a fresh lab. */
  variants(context: ScenarioContext): Promise<VariantRun[]>;
}

/**
 * A scenario from its definition: its result carries the definition's
 * texts and the run's store, and says plainly why it was skipped when the
 * machine lacks what it needs.
 */
export function failureScenario(definition: FailureScenario): Scenario {
  const { id, title, broke, fix, code } = definition;
  return {
    id,
    title,
    async run(context): Promise<ScenarioResult> {
      const base = { id, title, broke, fix, code, store: context.store };
      const missing = await definition.unavailable?.(context);
      if (missing) return { ...base, variants: [], skipped: missing };
      return { ...base, variants: await definition.variants(context) };
    },
  };
}
