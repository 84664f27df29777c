import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { FAILURE_SCENARIOS } from './failures';
import { failuresMarkdown, failuresTable } from './failures-report';
import { EXPECTED_CHARGES, environment, resultsMarkdown, table } from './report';
import type { ScenarioResult } from './scenario';
import { chooseStore } from './store-choice';
import { POLICIES, runWriteUp, type PolicyRun } from './write-up';

/** Where the runner writes. */
export const OUTPUT = {
  results: resolve(__dirname, '../results.json'),
  markdown: resolve(__dirname, '../../RESULTS.md'),
};

/** Ports of the runner's own lab, away from a lab started with `npm start`. */
const PORTS = { gateway: 3100, orders: 3101, payments: 3102 };

/** `SCENARIOS=write-up,double-click` runs only those; unset, all of them. */
function selected(id: string): boolean {
  const only = process.env.SCENARIOS?.split(',').map((s) => s.trim()).filter(Boolean);
  return !only || only.length === 0 || only.includes(id);
}

/** Run every scenario and policy, print the table, write results.json and RESULTS.md. */
export async function runAll(log: (line: string) => void = (line) => process.stderr.write(`${line}\n`)) {
  const choice = await chooseStore();
  log(`store: ${choice.store} (${choice.note})`);
  const runs: PolicyRun[] = [];
  const failures: ScenarioResult[] = [];
  try {
    for (const policy of selected('write-up') ? POLICIES : []) {
      log(`write-up: policy ${policy} ...`);
      const run = await runWriteUp(policy, choice.store, PORTS, choice.redisUrl);
      log(`write-up: policy ${policy}: ${run.charges} charge(s) in ${run.durationMs} ms`);
      runs.push(run);
    }
    for (const scenario of FAILURE_SCENARIOS.filter((s) => selected(s.id))) {
      log(`${scenario.id}: ${scenario.title}`);
      const result = await scenario.run({ store: choice.store, redisUrl: choice.redisUrl, ports: PORTS, log });
      log(result.skipped ? `${scenario.id}: skipped: ${result.skipped}` : `${scenario.id}: ${result.variants.map((v) => `${v.charges}`).join(' / ')} charges`);
      failures.push(result);
    }
  } finally {
    await choice.stop();
  }
  const env = environment(choice.store, choice.note);
  const results = {
    environment: env,
    scenarios: runs.map(({ events: _events, ledger: _ledger, ...run }) => ({ ...run, expectedCharges: EXPECTED_CHARGES[run.policy] })),
    failures: failures.map((result) => ({
      ...result,
      variants: result.variants.map(({ events: _events, ledger: _ledger, ...variant }) => variant),
    })),
  };
  mkdirSync(dirname(OUTPUT.results), { recursive: true });
  writeFileSync(OUTPUT.results, `${JSON.stringify(results, null, 2)}\n`);
  writeFileSync(OUTPUT.markdown, `${resultsMarkdown(runs, env)}\n${failuresMarkdown(failures)}`);
  return { runs, failures, results, table: `${table(runs)}\n\n${failuresTable(failures)}` };
}
