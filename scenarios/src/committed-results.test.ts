import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkMarkdownFile, type DiagramReport } from '@idempotency-chain/diagram-check';
import { chartLink, outputPaths, REPO_ROOT } from './output-paths';
import { parseSections } from './results-document';
import type { ResultsFile } from './results-file';
import { chaosChartId, readChaosFile } from './chaos/chaos-section';
import { DOCUMENT_SECTIONS } from './selection';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 });

// The committed write-up, as GitHub shows it: read only, never written by a test.
describe('the committed RESULTS.md', () => {
  const paths = outputPaths(REPO_ROOT);
  const markdown = readFileSync(paths.markdown, 'utf8');
  let report: DiagramReport;

  beforeAll(async () => {
    report = await checkMarkdownFile(paths.markdown);
  });

  it('has every diagram read whole by Mermaid', () => {
    expect(report.diagrams).toBeGreaterThan(4);
    expect(report.errors).toEqual([]);
    expect(report.messages.filter((m) => !m.whole)).toEqual([]);
  });

  it('has a section for every scenario and the soak, each with the run that wrote it', () => {
    const sections = parseSections(markdown);
    expect([...sections.keys()]).toEqual(DOCUMENT_SECTIONS);
    for (const [id, text] of sections) expect({ id, run: /^_Run: Node .+; took \d+ s\._$/m.test(text) }).toEqual({ id, run: true });
  });

  it('links a chart for every section that ran, and every linked chart is there', () => {
    const links = [...markdown.matchAll(/!\[[^\]]*\]\(([^)]+)\)/g)].map((m) => m[1] as string);
    const results = JSON.parse(readFileSync(paths.results, 'utf8')) as ResultsFile;
    const soaks = readChaosFile(paths)?.runs.map((run) => chaosChartId(run.store)) ?? [];
    const ran = ['write-up', ...results.failures.filter((f) => !f.skipped).map((f) => f.id), ...soaks];
    expect(links).toEqual(ran.map(chartLink));
    for (const link of links) expect({ link, there: existsSync(join(REPO_ROOT, link)) }).toEqual({ link, there: true });
  });
});
