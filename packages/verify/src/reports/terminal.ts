import type { RunProgress } from '../run/runner';
import type { RunReport, ScenarioReport } from '../run/report';
import { failureText } from './failure';

/** Something lines can be written to: `process.stdout` or a test's buffer. */
export interface Output {
  write(text: string): unknown;
  isTTY?: boolean;
}

const COLUMNS = ['scenario', 'result', 'effects', 'attempts', 'time'] as const;
const WIDTHS = [28, 6, 10, 8, 7];

/**
 * The live table: a row per scenario as it finishes and, on a terminal, a "running"
 * line that the next row overwrites. Failures are printed in full after the table.
 */
export function terminalProgress(out: Output): RunProgress {
  out.write(`${row([...COLUMNS])}\n`);
  return {
    scenarioStarted(scenario, index, total) {
      if (out.isTTY) out.write(`${row([scenario.name, '...', '', '', ''])} [${index + 1}/${total}]`);
    },
    scenarioFinished(report) {
      out.write(`${out.isTTY ? '\r\x1b[2K' : ''}${row(cells(report))}\n`);
    },
  };
}

/** The closing lines: every failure in full, then the verdict. */
export function terminalSummary(run: RunReport, out: Output): void {
  for (const failed of run.scenarios.filter((s) => !s.passed)) out.write(`\n${failureText(failed)}\n`);
  const passed = run.scenarios.filter((s) => s.passed).length;
  out.write(`\n${passed}/${run.scenarios.length} scenarios passed in ${(run.durationMs / 1000).toFixed(1)}s\n`);
}

function cells(report: ScenarioReport): string[] {
  return [
    report.name,
    report.passed ? 'pass' : 'FAIL',
    report.intents.map((i) => i.effects).join(',') || '-',
    String(report.attempts.length),
    `${(report.durationMs / 1000).toFixed(1)}s`,
  ];
}

function row(values: string[]): string {
  return values
    .map((v, i) => v.padEnd(WIDTHS[i] ?? 8))
    .join(' ')
    .trimEnd();
}
