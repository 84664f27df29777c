import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RunReport } from '../run/report';
import { junitReport } from './junit';
import { markdownReport } from './markdown';

/** The files a run leaves in its report directory. */
const REPORT_FILES = { json: 'report.json', junit: 'junit.xml', markdown: 'report.md' } as const;

/**
 * Writes the JSON, JUnit XML and Markdown reports into `dir` (created if missing).
 *
 * @public
 */
export function writeReports(run: RunReport, dir: string): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, REPORT_FILES.json), `${JSON.stringify(run, null, 2)}\n`);
  writeFileSync(join(dir, REPORT_FILES.junit), junitReport(run));
  writeFileSync(join(dir, REPORT_FILES.markdown), markdownReport(run));
}
