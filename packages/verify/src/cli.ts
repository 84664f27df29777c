#!/usr/bin/env node
import { constants as osConstants } from 'node:os';
import { join } from 'node:path';
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
  const interrupt = onInterrupt();
  try {
    const config = loadConfig(file);
    const run = await runChain(config, {
      configFile: file,
      scenarios: parsed.values.scenario ?? [],
      progress: terminalProgress(out),
      signal: interrupt.signal,
      serviceLogDir: join(parsed.values['report-dir'], 'services'),
    });
    terminalSummary(run, out);
    writeReports(run, parsed.values['report-dir']);
    out.write(`reports in ${parsed.values['report-dir']}/\n`);
    return run.passed ? 0 : 1;
  } catch (error) {
    // A config error already names file, line and field; anything else (an unknown
    // scenario, a port in use) is a setup problem too, not a broken invariant.
    err.write(`${error instanceof Error ? error.message : String(error)}\n`);
    // Interrupted, the shell's convention: 128 + the signal's number.
    return interrupt.by ? 128 + osConstants.signals[interrupt.by] : 2;
  } finally {
    interrupt.dispose();
  }
}

/**
 * Turns the first SIGINT or SIGTERM into an abort of the run, which then stops every
 * service and proxy it started: services run in process groups of their own, so
 * nothing else stops them. A second signal finds no handler and ends the process at once.
 */
function onInterrupt() {
  const controller = new AbortController();
  const state: { by?: 'SIGINT' | 'SIGTERM' } = {};
  const handlers = (['SIGINT', 'SIGTERM'] as const).map((name) => {
    const handler = () => {
      state.by = name;
      dispose();
      controller.abort(new Error(`interrupted by ${name}: stopped the services and proxies it started`));
    };
    process.once(name, handler);
    return [name, handler] as const;
  });
  const dispose = () => handlers.forEach(([name, handler]) => process.off(name, handler));
  return {
    signal: controller.signal,
    dispose,
    get by() {
      return state.by;
    },
  };
}

if (require.main === module) {
  void main(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
}
