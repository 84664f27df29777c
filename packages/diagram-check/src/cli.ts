#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import { checkDiagrams, mermaidBlocks } from './check';

const USAGE = 'usage: diagram-check [--json] <file.md>...';

/**
 * `diagram-check [--json] <file.md>...`: parse every Mermaid diagram of each
 * file with Mermaid and fail unless every message and note reads whole.
 */
async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const json = args.includes('--json');
  const files = args.filter((arg) => arg !== '--json');
  if (files.length === 0) {
    process.stderr.write(`${USAGE}\n`);
    process.exitCode = 2;
    return;
  }
  const reports = [];
  for (const file of files.map((f) => resolve(f))) {
    const report = await checkDiagrams(mermaidBlocks(readFileSync(file, 'utf8')));
    reports.push({ file, ...report });
    const whole = report.messages.filter((m) => m.whole).length;
    if (!json) {
      process.stdout.write(
        `${relative(process.cwd(), file)}: ${report.diagrams} diagrams, ${whole}/${report.messages.length} message lines parse whole\n`,
      );
      for (const e of report.errors) process.stdout.write(`  diagram ${e.diagram + 1} refused: ${e.error}\n`);
      for (const m of report.messages.filter((m) => !m.whole).slice(0, 20)) {
        process.stdout.write(`  diagram ${m.diagram + 1}: wrote "${m.source}", Mermaid read "${m.parsed ?? '(nothing)'}"\n`);
      }
    }
    if (report.errors.length > 0 || whole < report.messages.length) process.exitCode = 1;
  }
  if (json) process.stdout.write(`${JSON.stringify(reports)}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exitCode = 1;
});
