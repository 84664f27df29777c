import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { renderSvg } from '../charts';
import { chartLink, type OutputPaths } from '../output-paths';
import { parseSections, resultsDocument } from '../results-document';
import { DOCUMENT_SECTIONS } from '../selection';
import type { ChaosRecord } from './chaos-record';
import type { ChaosRunOutcome } from './chaos-run';
import { chaosChartId, putChaosSection } from './chaos-section';
import { timelineChart } from './timeline-chart';

/**
 * Write chaos.json, each store's timeline chart, and RESULTS.md with the
 * soak's section drawn again from chaos.json and every other section kept as
 * `npm run scenarios` wrote it. Charts are rendered first: a failure leaves
 * the files as they were. Returns the files written.
 */
export async function writeChaos(outcomes: ChaosRunOutcome[], records: ChaosRecord[], paths: OutputPaths): Promise<string[]> {
  const charts = await Promise.all(
    outcomes.map(async (outcome) => ({
      file: join(paths.root, chartLink(chaosChartId(outcome.settings.store))),
      svg: await renderSvg(
        timelineChart(`The soak on ${outcome.settings.store} (seed ${outcome.settings.seed}): faults against answers`, outcome.history),
      ),
    })),
  );
  for (const { file, svg } of charts) {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, svg.endsWith('\n') ? svg : `${svg}\n`);
  }
  mkdirSync(dirname(paths.chaos), { recursive: true });
  writeFileSync(paths.chaos, `${JSON.stringify({ runs: records }, null, 2)}\n`);
  const sections = parseSections(existsSync(paths.markdown) ? readFileSync(paths.markdown, 'utf8') : '');
  putChaosSection(sections, paths);
  writeFileSync(paths.markdown, resultsDocument(sections, DOCUMENT_SECTIONS));
  return [...charts.map((chart) => chart.file), paths.chaos, paths.markdown];
}
