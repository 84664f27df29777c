import type { RunProgress } from '../run/runner';
import type { RunReport, ScenarioReport } from '../run/report';
import { deliveriesOf, deliveryLine } from './delivery';
import { failureText } from './failure';

/** Something lines can be written to: `process.stdout` or a test's buffer. */
export interface Output {
  write(text: string): unknown;
  isTTY?: boolean;
}

const COLUMNS = ['scenario', 'result', 'effects', 'attempts', 'time'] as const;
const WIDTHS = [28, 6, 10, 8, 7];

/**
 * Progress as the run goes. On a terminal, a live table: a "running" row per scenario
 * that its result row overwrites. Anywhere else (a CI log, a pipe), plain lines, one as
 * each scenario starts and one as it ends: no escape codes, nothing redrawn.
 */
export function terminalProgress(out: Output): RunProgress {
  return out.isTTY ? liveTable(out) : progressLines(out);
}

function liveTable(out: Output): RunProgress {
  out.write(`${row([...COLUMNS])}\n`);
  return {
    scenarioStarted(scenario, index, total) {
      out.write(`${row([scenario.name, '...', '', '', ''])} ${counter(index, total)}`);
    },
    scenarioFinished(report) {
      // Back to the line's start and clear it: the running row becomes the result row.
      out.write(`\r\x1b[2K${row(cells(report))}\n${deliveryRows(report)}`);
    },
  };
}

function progressLines(out: Output): RunProgress {
  return {
    scenarioStarted(scenario, index, total) {
      out.write(`${counter(index, total)} ${scenario.name} started\n`);
    },
    scenarioFinished(report, index, total) {
      const [name, result, effects, attempts, time] = cells(report);
      out.write(`${counter(index, total)} ${name} ${result} effects=${effects} attempts=${attempts} time=${time}\n${deliveryRows(report)}`);
    },
  };
}

/** Under a scenario's row, one indented line per queue delivery it saw: tag, redelivered flag, key hash, ack or nack. */
function deliveryRows(report: ScenarioReport): string {
  return deliveriesOf(report.attempts)
    .map((a) => `    ${deliveryLine(a)}\n`)
    .join('');
}

function counter(index: number, total: number): string {
  return `[${index + 1}/${total}]`;
}

/**
 * The closing lines: the scenarios skipped for want of config (rows of the table on a
 * terminal), every failure in full, then the verdict.
 */
export function terminalSummary(run: RunReport, out: Output): void {
  for (const skip of run.skipped) {
    const because = `because ${skip.reason}`;
    out.write(out.isTTY ? `${row([skip.name, 'skip', because])}\n` : `skipped ${skip.name}, ${because}\n`);
  }
  for (const failed of run.scenarios.filter((s) => !s.passed)) out.write(`\n${failureText(failed)}\n`);
  out.write(`\n${verdict(run)} in ${(run.durationMs / 1000).toFixed(1)}s\n`);
}

/** `9/11 scenarios passed`, and how many were skipped, if any: a skip is never a pass. */
export function verdict(run: RunReport): string {
  const passed = run.scenarios.filter((s) => s.passed).length;
  const skipped = run.skipped.length > 0 ? ` (${run.skipped.length} skipped)` : '';
  return `${passed}/${run.scenarios.length} scenarios passed${skipped}`;
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
