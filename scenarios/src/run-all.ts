import { environment, type RunEnvironment } from './environment';
import { FAILURE_SCENARIOS } from './failures';
import type { ScenarioResult } from './scenario';
import { WRITE_UP } from './selection';
import { chooseStore } from './store-choice';
import { POLICIES, runWriteUp, type PolicyRun } from './write-up';

/** Everything one run measured, before anything is written. */
export interface RunOutcome {
  environment: RunEnvironment;
  writeUp?: { runs: PolicyRun[]; durationMs: number };
  failures: Array<{ result: ScenarioResult; durationMs: number }>;
  durationMs: number;
}

/**
 * Run the selected scenarios (ids, in the runner's order) on the store
 * `chooseStore` finds, and stop that store however the run ends.
 */
export async function runSelection(ids: readonly string[], log: (line: string) => void): Promise<RunOutcome> {
  const started = Date.now();
  const choice = await chooseStore();
  log(`store: ${choice.store} (${choice.detail})`);
  const env = environment(choice.store, choice.note);
  const outcome: RunOutcome = { environment: env, failures: [], durationMs: 0 };
  try {
    if (ids.includes(WRITE_UP)) {
      const from = Date.now();
      const runs: PolicyRun[] = [];
      for (const policy of POLICIES) {
        log(`write-up: policy ${policy} ...`);
        const run = await runWriteUp(policy, choice.store, choice.redisUrl);
        log(`write-up: policy ${policy}: ${run.charges} charge(s) in ${run.durationMs} ms`);
        runs.push(run);
      }
      outcome.writeUp = { runs, durationMs: Date.now() - from };
    }
    for (const scenario of FAILURE_SCENARIOS.filter((s) => ids.includes(s.id))) {
      log(`${scenario.id}: ${scenario.title}`);
      const from = Date.now();
      const result = await scenario.run({ store: choice.store, redisUrl: choice.redisUrl, log });
      log(
        result.skipped
          ? `${scenario.id}: skipped: ${result.skipped}`
          : `${scenario.id}: ${result.variants.map((v) => `${v.charges}`).join(' / ')} charges`,
      );
      outcome.failures.push({ result, durationMs: Date.now() - from });
    }
  } finally {
    await choice.stop();
  }
  outcome.durationMs = Date.now() - started;
  return outcome;
}
