import { EXPECTED_CHARGES } from './report';
import { OUTPUT, runAll } from './run-all';

async function main(): Promise<void> {
  const { runs, failures, table } = await runAll();
  process.stdout.write(`\n${table}\n\nwrote ${OUTPUT.markdown} and ${OUTPUT.results}\n`);
  const off = [
    ...runs.filter((run) => run.charges !== EXPECTED_CHARGES[run.policy]).map((run) => `write-up ${run.policy}`),
    ...failures.flatMap((f) => f.variants.filter((v) => v.charges !== v.expectedCharges).map((v) => `${f.id} ${v.variant}`)),
  ];
  if (off.length > 0) {
    process.stderr.write(`charges differ from what is expected for: ${off.join('; ')}\n`);
    process.exitCode = 1;
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exitCode = 1;
});
