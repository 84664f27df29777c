import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseConfig } from '../src/config/load';
import type { Attempt } from '../src/proxy/attempt';
import { failureText } from '../src/reports/failure';
import { terminalProgress } from '../src/reports/terminal';
import type { IntentReport, ScenarioReport } from '../src/run/report';
import { catalog } from '../src/scenarios/catalog';
import type { EffectExpectation, Scenario } from '../src/scenarios/scenario';
import { captureOutput } from './support/output';

const PAGE = 'docs/verify-your-chain.md';
const DOC = readFileSync(join(__dirname, '..', '..', '..', PAGE), 'utf8');

function block(language: string): string {
  const found = new RegExp('```' + language + '\\n([\\s\\S]*?)```').exec(DOC)?.[1];
  if (found === undefined) throw new Error(`${PAGE}: no ${language} block`);
  return found;
}

/** The page's chain, as the verifier reads it. */
const config = parseConfig(block('yaml'), PAGE);

/** What the live table writes: its header at once, then a result row per finished scenario. */
function table(reports: ScenarioReport[]): string[] {
  const out = captureOutput();
  const progress = terminalProgress({ ...out, isTTY: true });
  reports.forEach((report, index) => progress.scenarioFinished?.(report, index, reports.length));
  return out
    .text()
    .split('\n')
    .map((line) => line.replace('\r\x1b[2K', ''))
    .filter((line) => line !== '');
}

const ROW = /^(\S+)\s+(pass|FAIL)\s+(\S+)\s+(\d+)\s+(\d+\.\d)s$/;
const VIOLATION = /^ {2}([\w-]+) broken for intent (\S+) \(key ([0-9a-f]{8}|none)\): (.*)$/;
const INTENT = /^ {2}intent (\S+): effects (\d+) \(expected (once|at-most-once|none)\)$/;
const ATTEMPT =
  /^ {4}(\S+) a(\d+) (\S+) (\S+) k=([0-9a-f]{8}|none)(?: \[(.*)\])? -> (\d{3}|-) (answered|reply-lost|reset|upstream-failed|caller-gone)$/;

/** A result row read back into the report the table drew it from. */
function rowReport(line: string): ScenarioReport {
  const [, name, result, effects, attempts, seconds] = ROW.exec(line) ?? [];
  if (name === undefined) throw new Error(`not a table row: ${line}`);
  return {
    name,
    description: '',
    passed: result === 'pass',
    durationMs: Number(seconds) * 1000,
    intents: effects === '-' ? [] : (effects?.split(',') ?? []).map((n) => ({ effects: Number(n) }) as IntentReport),
    violations: [],
    attempts: Array.from({ length: Number(attempts) }, () => ({}) as Attempt),
  };
}

/** A failure, as the terminal prints it, read back into the report it was printed from. */
function failureReport(lines: string[]): ScenarioReport {
  const [head, ...rest] = lines;
  const [, name, description] = /^scenario (\S+): (.*)$/.exec(head ?? '') ?? [];
  if (name === undefined || description === undefined) throw new Error(`not a failure's first line: ${head}`);
  const report: ScenarioReport = { name, description, passed: false, durationMs: 0, intents: [], violations: [], attempts: [] };
  const keys = new Map<string, string | null>();
  for (const line of rest) {
    const violation = VIOLATION.exec(line);
    const intent = INTENT.exec(line);
    const attempt = ATTEMPT.exec(line);
    if (violation) {
      const [, invariant, intentId, key, message] = violation as unknown as string[];
      report.violations.push({ invariant: invariant as never, intentId: intentId!, message: message! });
      keys.set(intentId!, key === 'none' ? null : key!);
    } else if (intent) {
      const [, intentId, effects, expected] = intent as unknown as string[];
      report.intents.push({
        intentId: intentId!,
        keyHash: keys.get(intentId!) ?? null,
        expected: expected as EffectExpectation,
        effects: Number(effects),
        presses: [],
      });
    } else if (attempt) {
      const [, hop, number, method, path, key, faults, status, outcome] = attempt as unknown as (string | undefined)[];
      report.attempts.push({
        seq: report.attempts.length + 1,
        scenario: name,
        intent: undefined,
        hop: hop!,
        attempt: Number(number),
        method: method!,
        path: path!,
        keyHash: key === 'none' ? null : key!,
        faults: faults === undefined ? [] : faults.split(', '),
        status: status === '-' ? null : Number(status),
        outcome: outcome as Attempt['outcome'],
        startedMs: 0,
        endedMs: 0,
      });
    } else if (line !== '  attempts the proxies saw:') {
      throw new Error(`${PAGE}: a line the failure text never prints: ${line}`);
    }
  }
  return report;
}

/**
 * The page shows what a failure looks like with a real run's output: this keeps it
 * what the terminal prints today, line for line, so a change to the renderer or the
 * catalog that the page does not follow fails here.
 */
describe('docs/verify-your-chain.md', () => {
  it('shows a complete config the verifier accepts, for a three-service chain', () => {
    expect(config.hops.map((h) => h.name)).toEqual(['gateway', 'orders', 'payments']);
    expect(config.effect.postgres?.query).toContain('$1');
  });

  const [tablePart = '', ...failureParts] = block('text').trimEnd().split('\n\n');
  const rows = tablePart.split('\n');

  it('shows the live table as the terminal draws it', () => {
    const reports = rows.slice(1).map(rowReport);
    expect(reports.length).toBeGreaterThan(0);
    expect(table(reports)).toEqual(rows);
  });

  it('shows each failure as the terminal prints it, every attempt the proxies saw included', () => {
    expect(failureParts.length).toBeGreaterThan(0);
    const scenarios = new Map<string, Scenario>(catalog(config).map((s) => [s.name, s]));
    for (const part of failureParts) {
      const report = failureReport(part.split('\n'));
      expect(failureText(report)).toBe(part);
      expect(report.description).toBe(scenarios.get(report.name)?.description);
      // The table's row for the scenario: same effects, and no attempt left out of the failure.
      const row = rows
        .slice(1)
        .map(rowReport)
        .find((r) => r.name === report.name);
      expect(row).toMatchObject({ passed: false });
      expect(report.intents.map((i) => i.effects)).toEqual(row?.intents.map((i) => i.effects));
      expect(report.attempts).toHaveLength(row?.attempts.length ?? -1);
      expect(report.violations.length).toBeGreaterThan(0);
    }
  });
});
