/** What each measurement hands back to `main`, and how it is printed. */
import type { Chart } from './charts';

export interface Table {
  headers: string[];
  rows: string[][];
}

export interface Target {
  what: string;
  met: boolean;
  /** The figures that decided it. */
  detail: string;
}

export interface SectionResult {
  id: string;
  title: string;
  /** How it was measured, in a sentence or two (Markdown). */
  method: string;
  /** The answer in one sentence, for the top of BENCHMARKS.md. */
  headline: string;
  tables: Table[];
  targets: Target[];
  notes: string[];
  /** Markdown blocks showing where the time goes, for missed targets. */
  profiles: Array<{ title: string; markdown: string }>;
  /** Charts of the section's figures, rendered to SVG and embedded by a full run. */
  charts: Chart[];
}

/** A plain-text table for the terminal. */
function textTable(table: Table): string {
  const widths = table.headers.map((header, i) => Math.max(header.length, ...table.rows.map((row) => (row[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => cell.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  return [line(table.headers), line(widths.map((w) => '-'.repeat(w))), ...table.rows.map(line)].join('\n');
}

export function markdownTable(table: Table): string {
  const escape = (cell: string) => cell.replace(/\|/g, '\\|');
  return [
    `| ${table.headers.map(escape).join(' | ')} |`,
    `|${table.headers.map(() => '---').join('|')}|`,
    ...table.rows.map((row) => `| ${row.map(escape).join(' | ')} |`),
  ].join('\n');
}

export const mark = (met: boolean): string => (met ? 'met' : 'MISSED');

/** Print a finished section to the terminal. */
export function printSection(section: SectionResult): void {
  const out = [`\n== ${section.title} ==`];
  for (const table of section.tables) out.push(textTable(table), '');
  for (const target of section.targets) out.push(`  target ${mark(target.met)}: ${target.what} - ${target.detail}`);
  for (const note of section.notes) out.push(`  note: ${note.replace(/`/g, '')}`);
  for (const profile of section.profiles) out.push('', `  ${profile.title}`, '', profile.markdown.replace(/`/g, ''));
  process.stdout.write(`${out.join('\n')}\n`);
}
