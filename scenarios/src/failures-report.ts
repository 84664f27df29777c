import { sequenceDiagram } from './diagram';
import { runLine, type RunEnvironment } from './environment';
import type { ScenarioResult, VariantRun } from './scenario';

/** Diagrams longer than this many steps are cut, with a note saying how many were left out. */
const MAX_DIAGRAM_STEPS = 60;

/** The failure scenarios as rows of a terminal table. */
export function failuresTable(results: ScenarioResult[]): string {
  const rows: string[][] = [];
  for (const result of results) {
    if (result.skipped) rows.push([result.id, 'skipped', '-', '-', result.skipped]);
    for (const v of result.variants) rows.push([result.id, v.variant, String(v.charges), String(v.expectedCharges), v.outcome]);
  }
  const header = ['scenario', 'variant', 'charges', 'expected', 'what the callers got'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => Math.min((r[i] as string).length, i === 4 ? 90 : 60))));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i] as number)).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

/** One failure scenario's section of RESULTS.md, from this run. */
export function failureMarkdown(result: ScenarioResult, env: RunEnvironment, durationMs: number, chart: string): string {
  if (result.skipped) return [`### ${result.title}`, '', runLine(env, durationMs), '', `**Skipped:** ${result.skipped}`].join('\n');
  return [
    `### ${result.title}`,
    '',
    runLine(env, durationMs),
    '',
    `**What breaks.** ${result.broke}`,
    '',
    `**The fix.** ${result.fix}`,
    '',
    `**Where.** ${result.code}`,
    '',
    `![Charges per variant: ${result.variants.map((v) => `${v.variant}: ${v.charges}`).join('. ')}](${chart})`,
    '',
    '| variant | charges | expected | what the callers got |',
    '|---|---|---|---|',
    ...result.variants.map((v) => `| ${v.variant} | **${v.charges}** | ${v.expectedCharges} | ${v.outcome} |`),
    '',
    ...result.variants.flatMap((v) => [
      `<details><summary>${v.variant}: timeline</summary>`,
      '',
      '```mermaid',
      diagramOf(v),
      '```',
      '',
      '</details>',
      '',
    ]),
  ]
    .join('\n')
    .trimEnd();
}

function diagramOf(variant: VariantRun): string {
  const callerStarts = variant.events.filter((e) => e.service === 'caller').map((e) => e.startedAt ?? e.time);
  const origin = callerStarts.length > 0 ? Math.min(...callerStarts) : Math.min(...variant.events.map((e) => e.time));
  const lines = sequenceDiagram(variant.events, variant.ledger, origin).split('\n');
  const head = 5; // "sequenceDiagram" and the four participants
  if (lines.length - head <= MAX_DIAGRAM_STEPS) return lines.join('\n');
  const left = lines.length - head - MAX_DIAGRAM_STEPS;
  return [...lines.slice(0, head + MAX_DIAGRAM_STEPS), `  Note over Caller,Payments: ... ${left} more steps`].join('\n');
}
