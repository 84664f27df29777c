#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { loadConfig } from './config/load';
import { helpText, USAGE } from './help';
import { terminalProgress, terminalSummary, type Output } from './reports/terminal';
import { writeReports } from './reports/write';
import { runChain } from './run/runner';

/** Runs the command line; resolves with the exit code. `out` and `err` default to the process's. */
export async function main(argv: string[], out: Output = process.stdout, err: Output = process.stderr): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        scenario: { type: 'string', multiple: true, short: 's' },
        'report-dir': { type: 'string', default: 'idempotency-verify-report' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    err.write(`${(error as Error).message}\n${USAGE}\n`);
    return 2;
  }
  if (parsed.values.help) {
    out.write(`${helpText()}\n`);
    return 0;
  }
  const [command, file] = parsed.positionals;
  if (command !== 'run' || file === undefined) {
    err.write(`${USAGE}\n(--help lists the options and scenarios)\n`);
    return 2;
  }
  try {
    const config = loadConfig(file);
    const run = await runChain(config, {
      configFile: file,
      scenarios: parsed.values.scenario ?? [],
      progress: terminalProgress(out),
    });
    terminalSummary(run, out);
    writeReports(run, parsed.values['report-dir']);
    out.write(`reports in ${parsed.values['report-dir']}/\n`);
    return run.passed ? 0 : 1;
  } catch (error) {
    // A config error already names file, line and field; anything else (an unknown
    // scenario, a port in use) is a setup problem too, not a broken invariant.
    err.write(`${error instanceof Error ? error.message : String(error)}\n`);
    return 2;
  }
}

if (require.main === module) {
  void main(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
}
