import { cpus, loadavg } from 'node:os';
import type { Environment } from './environment';
import { mark, markdownTable, type SectionResult } from './report';
import { SETTINGS } from './settings';

/**
 * BENCHMARKS.md for a full run: headlines, targets, how it was run, then
 * each section with its tables, charts (`chartPath(name)`, relative to the
 * repository root, already written) and profiles.
 */
export function renderMarkdown(results: SectionResult[], env: Environment, seconds: number, chartPath: (name: string) => string): string {
  const targets = results.flatMap((r) => r.targets.map((t) => ({ section: r.title.split(':')[0] ?? r.id, ...t })));
  const missed = targets.filter((t) => !t.met);
  const out: string[] = [
    '# Benchmarks',
    '',
    `_Written by \`npm run bench\` (\`turbo run bench\`, never cached) on ${env.date}. Do not edit by hand: run it again._`,
    '',
    `**Conditions of this run:** load average ${env.loadAtStart.toFixed(2)} at the start and ${(loadavg()[0] ?? Number.NaN).toFixed(2)} at the end on ${cpus().length} cores ` +
      `(${env.loadAtStart < cpus().length ? 'a quiet machine' : 'other work competed with every figure: read the ratios, not the absolute figures'}); ` +
      `Redis PING p99 ${(env.pingP99Us / 1000).toFixed(2)} ms (sequential, from the benchmark's process, at the start).`,
    '',
    'What does idempotency add to every request? Each figure below is measured against its own baseline in the same run ' +
      '(the bare endpoint, raw Redis `SET`, a Redis PING, a 50 ms polling loop, the peer libraries), because on a shared machine absolute ' +
      'figures move from run to run while same-run ratios hold much better.',
    '',
    '## What it costs, in this run',
    '',
    ...results.map((r) => `- ${r.headline}`),
    '',
    '## Targets',
    '',
    markdownTable({
      headers: ['measurement', 'target', 'result', 'status'],
      rows: targets.map((t) => [t.section, t.what, t.detail, t.met ? 'met' : '**missed**']),
    }),
    '',
  ];
  if (missed.length > 0) {
    out.push(
      `**${missed.length} target${missed.length === 1 ? '' : 's'} missed**: ${missed.map((t) => `${t.what} (${t.detail})`).join('; ')}. ` +
        'The section of each one holds the CPU profile that shows where the time goes.',
      '',
    );
  } else {
    out.push('Every target was met in this run.', '');
  }
  out.push(
    '## How this was run',
    '',
    `- Command: \`${env.command}\` from the repository root (\`turbo run bench\` builds the workspace, then runs \`node --expose-gc dist/main.js\` in \`bench/\`). ` +
      '`BENCH_ONLY=endpoint,store,waiters,e2e,memory,peer,encryption,record-bytes,live-records,claim-p99-10x,deployed,transports` selects sections (a partial run only prints).',
    `- Machine: ${env.machine}.`,
    `- Unit costs measured at the start: ${env.probes}.`,
    `- Node ${env.node}; Redis ${env.redis}, shared with other users of the machine (every key of the run is under its own prefix and deleted at the end); ` +
      `PostgreSQL ${env.postgres}, where the run writes only a table of its own, dropped at the end.`,
    `- Packages: ${env.packages.map(([name, version]) => `${name} ${version}`).join(', ')}.`,
    `- Commit ${env.commit}; the whole run took ${seconds.toFixed(0)} s; load average at the end ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')} ` +
      `(on ${cpus().length} cores: other work on the machine competes with every figure, which is why each one is read against a baseline from the same run).`,
    `- Every figure is the median of ${SETTINGS.runs} runs (${SETTINGS.httpRuns} for the HTTP load of sections 1, 6 and 11), with the spread as min-max where it matters; ratios are computed run by run (same round), then their median. ` +
      'The charts are drawn by the same run from the same figures (Vega-Lite, rendered to SVG in Node).',
    '',
  );
  for (const result of results) {
    out.push(`## ${result.title}`, '', result.method, '');
    for (const table of result.tables) out.push(markdownTable(table), '');
    for (const chart of result.charts) out.push(`![${chart.title}](${chartPath(chart.name)})`, '');
    for (const target of result.targets) out.push(`- Target ${mark(target.met).toLowerCase()}: ${target.what}: ${target.detail}.`);
    if (result.targets.length > 0) out.push('');
    for (const note of result.notes) out.push(`- ${note}`);
    if (result.notes.length > 0) out.push('');
    for (const profile of result.profiles) out.push(`### ${profile.title}`, '', profile.markdown, '');
  }
  return `${out
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trimEnd()}\n`;
}
