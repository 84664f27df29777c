import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DiagramReport } from './check';

// From dist (the package's users) and from src (its own tests) alike.
const CLI = join(__dirname, '..', 'dist', 'cli.js');

/** Parse every Mermaid diagram of a Markdown file with Mermaid itself, in a child process. */
export function checkMarkdownFile(file: string): Promise<DiagramReport> {
  return new Promise((resolve, reject) => {
    // The command exits 1 when a label is cut: that is an answer, read from its output all the same.
    execFile(process.execPath, [CLI, '--json', file], { maxBuffer: 64 * 1024 * 1024 }, (_error, stdout, stderr) => {
      try {
        const [report] = JSON.parse(stdout) as DiagramReport[];
        if (report) return resolve(report);
      } catch {
        // Not JSON: the command failed before it could answer; its stderr says why.
      }
      reject(new Error(`diagram-check gave no report for ${file}: ${stderr}`));
    });
  });
}

/** The same for diagrams given as text (each the body of a ```mermaid block). */
export async function checkDiagramTexts(diagrams: readonly string[]): Promise<DiagramReport> {
  const dir = mkdtempSync(join(tmpdir(), 'diagram-check-'));
  try {
    const file = join(dir, 'diagrams.md');
    writeFileSync(file, diagrams.map((d) => `\`\`\`mermaid\n${d}\n\`\`\`\n`).join('\n'));
    return await checkMarkdownFile(file);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
