/**
 * `npm run bench` (`turbo run bench`): what idempotency costs, measured in
 * one run so every ratio compares figures taken minutes apart on the same
 * machine. Prints each section as it finishes and, when every section ran,
 * writes BENCHMARKS.md at the repository root and its charts in
 * `bench/charts/`. `BENCH_ONLY=endpoint,store` runs a subset (printed only).
 */
import { rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { CHART_DIR, renderCharts, writeCharts } from './charts';
import { claimP99 } from './claim-p99';
import { deployedComparison } from './deployed';
import { e2eReplay } from './e2e-replay';
import { encryptionCost } from './encryption-cost';
import { endpointOverhead } from './endpoint-overhead';
import { collectEnvironment, REPO_ROOT } from './environment';
import { renderMarkdown } from './markdown';
import { memoryChurn } from './memory-churn';
import { liveRecords } from './live-records';
import { peerComparison } from './peer';
import { recordBytes } from './record-bytes';
import { killAllChildrenNow, PROFILE_DIR, stopAllChildren } from './processes';
import { connect, deleteByPrefix, RUN_PREFIX } from './redis-tools';
import { mark, printSection, type SectionResult } from './report';
import { SETTINGS } from './settings';
import { storeCycles } from './store-cycles';
import { transportComparison } from './transports';
import { waiterWakeup } from './waiter-wakeup';

type Log = (line: string) => void;

const SECTIONS: Array<{ id: string; run: (log: Log) => Promise<SectionResult> }> = [
  { id: 'endpoint', run: endpointOverhead },
  { id: 'store', run: storeCycles },
  { id: 'waiters', run: waiterWakeup },
  { id: 'e2e', run: e2eReplay },
  { id: 'memory', run: memoryChurn },
  { id: 'peer', run: peerComparison },
  { id: 'encryption', run: encryptionCost },
  { id: 'record-bytes', run: recordBytes },
  { id: 'live-records', run: liveRecords },
  { id: 'claim-p99-10x', run: claimP99 },
  { id: 'deployed', run: deployedComparison },
  { id: 'transports', run: transportComparison },
];

const started = Date.now();
const log: Log = (line) => {
  const s = Math.floor((Date.now() - started) / 1000);
  process.stdout.write(`[${String(Math.floor(s / 60)).padStart(2, '0')}:${String(s % 60).padStart(2, '0')}] ${line}\n`);
};

async function cleanUpRedis(): Promise<void> {
  const client = await connect();
  try {
    const deleted = await deleteByPrefix(client, RUN_PREFIX);
    log(`Redis: ${deleted} keys left under ${RUN_PREFIX}${deleted > 0 ? ' (deleted now)' : ''}`);
  } finally {
    await client.quit();
  }
}

async function main(): Promise<number> {
  const only = (process.env.BENCH_ONLY ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const unknown = only.filter((id) => !SECTIONS.some((s) => s.id === id));
  if (unknown.length > 0) throw new Error(`BENCH_ONLY: unknown ${unknown.join(', ')}; known: ${SECTIONS.map((s) => s.id).join(', ')}`);
  const selected = SECTIONS.filter((s) => only.length === 0 || only.includes(s.id));
  rmSync(PROFILE_DIR, { recursive: true, force: true }); // profiles of earlier runs
  const environment = await collectEnvironment();
  log(
    `bench: ${selected.map((s) => s.id).join(', ')} on ${environment.cpu}, Node ${process.version}, Redis ${environment.redis}; key prefix ${RUN_PREFIX}`,
  );

  const results: SectionResult[] = [];
  const failures: string[] = [];
  for (const section of selected) {
    log(`-- ${section.id}`);
    const sectionStart = Date.now();
    try {
      const result = await section.run(log);
      results.push(result);
      printSection(result);
      log(`-- ${section.id} done in ${((Date.now() - sectionStart) / 1000).toFixed(0)} s`);
    } catch (error) {
      failures.push(`${section.id}: ${(error as Error).message}`);
      log(`-- ${section.id} FAILED: ${(error as Error).stack ?? String(error)}`);
      await stopAllChildren();
    }
  }
  await cleanUpRedis();

  const targets = results.flatMap((r) => r.targets.map((t) => ({ section: r.title, ...t })));
  process.stdout.write('\n== Targets ==\n');
  for (const target of targets) process.stdout.write(`  ${mark(target.met).padEnd(6)} ${target.what}: ${target.detail}\n`);
  for (const failure of failures) process.stdout.write(`  FAILED ${failure}\n`);

  // Rendered in every run, so a partial run shows that the charts still draw.
  const rendered = await renderCharts(results.flatMap((r) => r.charts));
  const complete = selected.length === SECTIONS.length && failures.length === 0;
  if (complete && !SETTINGS.quick) {
    for (const file of writeCharts(rendered)) log(`wrote ${file}`);
    const file = join(REPO_ROOT, 'BENCHMARKS.md');
    const chartPath = (name: string) => relative(REPO_ROOT, join(CHART_DIR, `${name}.svg`));
    writeFileSync(file, renderMarkdown(results, environment, (Date.now() - started) / 1000, chartPath));
    log(`wrote ${file}`);
  } else {
    for (const [name, svg] of rendered) log(`chart ${name}: ${svg.length} bytes of SVG rendered, not written`);
    log(
      `BENCHMARKS.md and the charts not written (${failures.length > 0 ? 'a section failed' : SETTINGS.quick ? 'BENCH_QUICK' : 'BENCH_ONLY'}: only a full run writes them)`,
    );
  }
  log(`total ${((Date.now() - started) / 1000).toFixed(0)} s`);
  return failures.length > 0 ? 1 : 0;
}

let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    if (interrupted) return;
    interrupted = true;
    log(`${signal}: stopping children and cleaning Redis`);
    void stopAllChildren()
      .then(cleanUpRedis)
      .finally(() => process.exit(130));
  });
}
process.on('exit', killAllChildrenNow);

main().then(
  (code) => process.exit(code),
  async (error: unknown) => {
    process.stderr.write(`bench: ${(error as Error).stack ?? String(error)}\n`);
    await stopAllChildren();
    await cleanUpRedis().catch(() => undefined);
    process.exit(1);
  },
);
