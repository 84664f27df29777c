import type { RunReport, ScenarioReport } from '../run/report';
import { deliveriesOf, deliveryLine } from './delivery';
import { sequenceDiagram } from './mermaid';
import { verdict } from './terminal';

/** The run as Markdown: a summary table, then per scenario its intents, broken invariants and diagram. */
export function markdownReport(run: RunReport): string {
  return [
    `# Idempotency verification: ${run.passed ? 'passed' : 'FAILED'}`,
    '',
    `Config \`${run.config}\`, started ${run.startedAt}, ${verdict(run)} in ${(run.durationMs / 1000).toFixed(1)}s.`,
    '',
    '| Scenario | Result | Effects | Attempts seen |',
    '| --- | --- | --- | --- |',
    ...run.scenarios.map(
      (s) => `| ${s.name} | ${s.passed ? 'pass' : '**FAIL**'} | ${s.intents.map((i) => i.effects).join(', ')} | ${s.attempts.length} |`,
    ),
    ...run.skipped.map((s) => `| ${s.name} | skipped, because ${cell(s.reason)} | | |`),
    '',
    ...run.scenarios.flatMap((s) => section(s, run.hops)),
  ].join('\n');
}

function section(s: ScenarioReport, hops: string[]): string[] {
  return [
    `## ${s.name}: ${s.passed ? 'pass' : 'FAIL'}`,
    '',
    s.description,
    '',
    ...(s.error ? [`Could not finish: ${s.error}`, ''] : []),
    ...(s.notExercised ? [...s.notExercised.map((fault) => `- **not exercised**: ${fault}`), ''] : []),
    ...s.violations.map((v) => `- **${v.invariant}** broken for \`${v.intentId}\`: ${v.message}`),
    ...(s.violations.length > 0 ? [''] : []),
    '| Intent | Key | Expected | Effects | Caller saw |',
    '| --- | --- | --- | --- | --- |',
    ...s.intents.map(
      (i) =>
        `| \`${i.intentId}\` | ${i.keyHash ?? 'none'} | ${i.expected} | ${i.effects} | ${i.presses
          .map((p) => `${p.label}: ${p.answers.map((a) => a.status ?? a.error).join(' ')}`)
          .join('; ')} |`,
    ),
    '',
    ...deliveryList(s),
    '```mermaid',
    sequenceDiagram(hops, s.attempts),
    '```',
    '',
  ];
}

/** The queue hop's deliveries, one item each, before the diagram; nothing when the scenario saw none. */
function deliveryList(s: ScenarioReport): string[] {
  const deliveries = deliveriesOf(s.attempts);
  return deliveries.length === 0 ? [] : ['Deliveries:', '', ...deliveries.map((a) => `- \`${deliveryLine(a)}\``), ''];
}

/** A table cell keeps to its cell: a `|` would start the next one. */
function cell(text: string): string {
  return text.replace(/\|/g, '\\|');
}
