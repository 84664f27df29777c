import { resolve } from 'node:path';
import { constants } from 'node:os';
import { failuresTable } from './failures-report';
import { outputPaths, shownPath } from './output-paths';
import { EXPECTED_CHARGES, table } from './report';
import { runSelection, type RunOutcome } from './run-all';
import { listing, selectionFrom, UnknownScenarioError, type Selection } from './selection';
import { writeResults, type WriteSummary } from './write-results';

const USAGE = `usage: npm run scenarios [-- --list | --out DIR]
  SCENARIOS=id,id   run only these (see --list); RESULTS.md keeps every other section
  --list            print the scenario ids and stop
  --out DIR         write RESULTS.md, scenarios/results.json and scenarios/charts under DIR instead of the repository`;

/** The repository's files are written at the end only: stopped before, the run leaves them untouched. */
function stopOnSignals(): void {
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(signal, () => {
      process.stderr.write(`\nstopped by ${signal}: nothing written; the lab and any Redis this run started are being killed\n`);
      // 'exit' kills every child the run started (see children.ts).
      process.exit(128 + constants.signals[signal]);
    });
  }
}

function expectationsMissed(outcome: RunOutcome): string[] {
  return [
    ...(outcome.writeUp?.runs ?? []).filter((run) => run.charges !== EXPECTED_CHARGES[run.policy]).map((run) => `write-up ${run.policy}`),
    ...outcome.failures.flatMap(({ result }) =>
      result.variants.filter((v) => v.charges !== v.expectedCharges).map((v) => `${result.id} ${v.variant}`),
    ),
  ];
}

function report(outcome: RunOutcome, selection: Selection, summary: WriteSummary): string {
  const tables = [
    outcome.writeUp ? table(outcome.writeUp.runs) : '',
    outcome.failures.length > 0 ? failuresTable(outcome.failures.map((f) => f.result)) : '',
  ];
  const skipped = outcome.failures.filter(({ result }) => result.skipped).map(({ result }) => `  ${result.id}: ${result.skipped}`);
  const lines = [
    ...tables.filter(Boolean).flatMap((t) => [t, '']),
    `store: ${outcome.environment.store} (${outcome.environment.storeNote}); ${Math.round(outcome.durationMs / 1000)} s`,
    ...(skipped.length > 0 ? [`skipped ${skipped.length} scenario(s), as this machine lacks what they need:`, ...skipped] : []),
    ...(summary.keptSkipped.length > 0
      ? [`RESULTS.md keeps the sections an earlier run wrote for: ${summary.keptSkipped.join(', ')}`]
      : []),
    `${selection.partial ? 'partial run: updated' : 'wrote'} ${summary.written.join(', ') || 'no section'}${selection.partial ? '; every other section kept' : ''}`,
    ...summary.files.map((file) => `  ${shownPath(file)}`),
  ];
  return `\n${lines.join('\n')}\n`;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  if (args.includes('--list')) return void process.stdout.write(`${listing()}\n`);
  const outAt = args.indexOf('--out');
  const known = new Set(outAt >= 0 ? ['--out', args[outAt + 1]] : []);
  if (args.some((arg) => !known.has(arg)) || (outAt >= 0 && !args[outAt + 1])) {
    process.stderr.write(`${USAGE}\n`);
    process.exitCode = 2;
    return;
  }
  let selection: Selection;
  try {
    selection = selectionFrom(process.env.SCENARIOS);
  } catch (error) {
    if (!(error instanceof UnknownScenarioError)) throw error;
    process.stderr.write(
      `SCENARIOS: ${error.message}\nnothing run, nothing written (npm run scenarios -- --list shows every id with its title)\n`,
    );
    process.exitCode = 2;
    return;
  }
  stopOnSignals();
  const paths = outputPaths(outAt >= 0 ? resolve(args[outAt + 1] as string) : undefined);
  const outcome = await runSelection(selection.ids, (line) => process.stderr.write(`${line}\n`));
  const summary = await writeResults(outcome, paths);
  process.stdout.write(report(outcome, selection, summary));
  const missed = expectationsMissed(outcome);
  if (missed.length > 0) {
    process.stderr.write(`charges differ from what is expected for: ${missed.join('; ')}\n`);
    process.exitCode = 1;
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  // Exit now, so the 'exit' hook kills whatever the failed run left running.
  process.exit(1);
});
