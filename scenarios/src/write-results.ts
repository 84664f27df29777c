import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { chargesChart, renderSvg, sideOf, type ChargeBar } from './charts';
import { failureMarkdown } from './failures-report';
import { chartLink, type OutputPaths } from './output-paths';
import { EXPECTED_CHARGES, writeUpMarkdown } from './report';
import { parseSections, resultsDocument, section } from './results-document';
import { failureRecord, mergeResults, policyRecord, readResults, type FailureRecord } from './results-file';
import type { RunOutcome } from './run-all';
import { DOCUMENT_SECTIONS, SCENARIO_IDS, WRITE_UP } from './selection';
import { putChaosSection } from './chaos/chaos-section';

/** What a run wrote, and what it left as an earlier run wrote it. */
export interface WriteSummary {
  /** Sections (and their charts) this run wrote. */
  written: string[];
  /** Sections this run skipped and left as an earlier run wrote them. */
  keptSkipped: string[];
  files: string[];
}

function readIfThere(path: string): string | undefined {
  return existsSync(path) ? readFileSync(path, 'utf8') : undefined;
}

/** The write-up's policies as bars: no key and a key per attempt are the naive side. */
function policyBars(outcome: NonNullable<RunOutcome['writeUp']>): ChargeBar[] {
  return outcome.runs.map((run) => ({
    label: run.policy,
    charges: run.charges,
    side: run.policy === 'none' || run.policy === 'per-attempt' ? 'naive' : 'ours',
  }));
}

/**
 * Put this run's sections into RESULTS.md, results.json and the charts under
 * `paths`, keeping every section the run did not run. A scenario the run
 * had to skip keeps the section an earlier run wrote, if there is one.
 * Charts are rendered before anything is written, so a failure leaves the
 * files as they were.
 */
export async function writeResults(outcome: RunOutcome, paths: OutputPaths): Promise<WriteSummary> {
  const sections = parseSections(readIfThere(paths.markdown) ?? '');
  const earlier = readResults(readIfThere(paths.results));
  const env = outcome.environment;
  const summary: WriteSummary = { written: [], keptSkipped: [], files: [] };
  const charts: Array<{ id: string; title: string; bars: ChargeBar[] }> = [];
  let writeUp;
  if (outcome.writeUp) {
    const { runs, durationMs } = outcome.writeUp;
    sections.set(WRITE_UP, section(WRITE_UP, writeUpMarkdown(runs, env, durationMs, chartLink(WRITE_UP))));
    writeUp = { environment: env, durationMs, policies: runs.map((run) => policyRecord(run, EXPECTED_CHARGES[run.policy])) };
    charts.push({ id: WRITE_UP, title: 'The write-up: charges per policy', bars: policyBars(outcome.writeUp) });
    summary.written.push(WRITE_UP);
  }
  const failures: FailureRecord[] = [];
  for (const { result, durationMs } of outcome.failures) {
    if (result.skipped && sections.has(result.id)) {
      summary.keptSkipped.push(result.id);
      continue;
    }
    sections.set(result.id, section(result.id, failureMarkdown(result, env, durationMs, chartLink(result.id))));
    failures.push(failureRecord(result, env, durationMs));
    summary.written.push(result.id);
    if (!result.skipped) {
      const bars = result.variants.map((v) => ({ label: v.variant, charges: v.charges, side: sideOf(v.variant) }));
      charts.push({ id: result.id, title: `${result.id}: charges, naive and ours`, bars });
    }
  }
  const svgs = await Promise.all(
    charts.map(async (chart) => ({ id: chart.id, svg: await renderSvg(chargesChart(chart.title, chart.bars)) })),
  );

  for (const { id, svg } of svgs) {
    const file = join(paths.root, chartLink(id));
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, svg.endsWith('\n') ? svg : `${svg}\n`);
    summary.files.push(file);
  }
  const results = mergeResults(earlier, { environment: env, writeUp, failures }, SCENARIO_IDS);
  mkdirSync(dirname(paths.results), { recursive: true });
  writeFileSync(paths.results, `${JSON.stringify(results, null, 2)}\n`);
  // The soak's section is chaos.json's: drawn again, never lost.
  putChaosSection(sections, paths);
  writeFileSync(paths.markdown, resultsDocument(sections, DOCUMENT_SECTIONS));
  summary.files.push(paths.results, paths.markdown);
  return summary;
}
