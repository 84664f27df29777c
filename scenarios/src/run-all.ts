import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { EXPECTED_CHARGES, environment, resultsMarkdown, table } from './report';
import { chooseStore } from './store-choice';
import { POLICIES, runWriteUp, type PolicyRun } from './write-up';

/** Where the runner writes. */
export const OUTPUT = {
  results: resolve(__dirname, '../results.json'),
  markdown: resolve(__dirname, '../../RESULTS.md'),
};

/** Ports of the runner's own lab, away from a lab started with `npm start`. */
const PORTS = { gateway: 3100, orders: 3101, payments: 3102 };

/** Run every scenario and policy, print the table, write results.json and RESULTS.md. */
export async function runAll(log: (line: string) => void = (line) => process.stderr.write(`${line}\n`)) {
  const choice = await chooseStore();
  log(`store: ${choice.store} (${choice.note})`);
  const runs: PolicyRun[] = [];
  try {
    for (const policy of POLICIES) {
      log(`write-up: policy ${policy} ...`);
      const run = await runWriteUp(policy, choice.store, PORTS, choice.redisUrl);
      log(`write-up: policy ${policy}: ${run.charges} charge(s) in ${run.durationMs} ms`);
      runs.push(run);
    }
  } finally {
    await choice.stop();
  }
  const env = environment(choice.store, choice.note);
  const results = {
    environment: env,
    scenarios: runs.map(({ events: _events, ledger: _ledger, ...run }) => ({ ...run, expectedCharges: EXPECTED_CHARGES[run.policy] })),
  };
  mkdirSync(dirname(OUTPUT.results), { recursive: true });
  writeFileSync(OUTPUT.results, `${JSON.stringify(results, null, 2)}\n`);
  writeFileSync(OUTPUT.markdown, resultsMarkdown(runs, env));
  return { runs, results, table: table(runs) };
}
