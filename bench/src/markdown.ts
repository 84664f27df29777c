import { execFileSync } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync, writeSync } from 'node:fs';
import { cpus, loadavg, platform, release, totalmem } from 'node:os';
import { join } from 'node:path';
import { connect, info, REDIS_URL } from './redis-tools';
import { mark, markdownTable, type SectionResult } from './report';
import { SETTINGS } from './settings';
import { percentile } from './stats';

const REPO_ROOT = join(__dirname, '..', '..');

export interface Environment {
  date: string;
  commit: string;
  cpu: string;
  machine: string;
  node: string;
  redis: string;
  packages: Array<[string, string]>;
  command: string;
  /** What one system call and one Redis round trip cost here: the unit every figure is made of. */
  probes: string;
}

/** Nanoseconds per `write(2)` of one byte to /dev/null. */
function syscallNs(): number {
  const fd = openSync('/dev/null', 'w');
  const byte = Buffer.from('x');
  const count = 50_000;
  const started = process.hrtime.bigint();
  for (let i = 0; i < count; i++) writeSync(fd, byte);
  const ns = Number(process.hrtime.bigint() - started) / count;
  closeSync(fd);
  return ns;
}

const PACKAGES = [
  '@idempotency-chain/idempotency',
  '@nestjs/core',
  '@nestjs/platform-fastify',
  'fastify',
  'ioredis',
  'autocannon',
  '@node-idempotency/nestjs',
  '@node-idempotency/storage-adapter-redis',
  'redis',
];

function versionOf(name: string): string {
  for (const dir of [join(REPO_ROOT, 'bench', 'node_modules'), join(REPO_ROOT, 'node_modules')]) {
    const file = join(dir, name, 'package.json');
    if (existsSync(file)) return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
  }
  return 'not found';
}

/** ", a Firecracker microVM" when the kernel says so: its system calls cost more than bare metal's. */
function virtualisation(): string {
  try {
    return readFileSync('/proc/cmdline', 'utf8').includes('firecracker') ? ' (a Firecracker microVM)' : '';
  } catch {
    return '';
  }
}

function git(...args: string[]): string {
  try {
    return execFileSync('git', args, { cwd: REPO_ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return '';
  }
}

export async function collectEnvironment(): Promise<Environment> {
  const client = await connect();
  const server = await info(client, 'server');
  const pings: number[] = [];
  for (let i = 0; i < 2000; i++) {
    const started = performance.now();
    await client.ping();
    pings.push((performance.now() - started) * 1000);
  }
  await client.quit();
  const probes =
    `one \`write(2)\` to /dev/null ${(syscallNs() / 1000).toFixed(1)} µs; one Redis PING from this Node process (ioredis, loopback, sequential) ` +
    `${percentile(pings.slice(200), 50).toFixed(0)} µs p50 / ${percentile(pings.slice(200), 99).toFixed(0)} µs p99`;
  const cores = cpus();
  const cpu = `${cores.length} x ${cores[0]?.model.trim() ?? 'unknown CPU'}`;
  const commit = git('rev-parse', '--short', 'HEAD') || 'unknown';
  const dirty = git('status', '--porcelain').length > 0;
  const url = new URL(REDIS_URL);
  if (url.password) url.password = '***';
  return {
    date: new Date().toISOString(),
    commit: `${commit}${dirty ? ' (with uncommitted changes)' : ''}`,
    cpu,
    machine: `${cpu}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB RAM, ${platform()} ${release()}${virtualisation()}, load average at start ${loadavg().map((l) => l.toFixed(2)).join(' ')}`,
    node: process.version,
    redis: `${server.get('redis_version') ?? '?'} (${server.get('redis_mode') ?? '?'}, ${server.get('multiplexing_api') ?? '?'}, at ${url.host})`,
    packages: PACKAGES.map((name) => [name, versionOf(name)]),
    command: `REDIS_URL=${url.toString().replace(/\/$/, '')} npm run bench`,
    probes,
  };
}

export function renderMarkdown(results: SectionResult[], env: Environment, seconds: number): string {
  const targets = results.flatMap((r) => r.targets.map((t) => ({ section: r.title.split(':')[0] ?? r.id, ...t })));
  const missed = targets.filter((t) => !t.met);
  const out: string[] = [
    '# Benchmarks',
    '',
    `_Written by \`npm run bench\` (\`turbo run bench\`, never cached) on ${env.date}. Do not edit by hand: run it again._`,
    '',
    'What does idempotency add to every request? Each figure below is measured against its own baseline in the same run ' +
      '(the bare endpoint, raw Redis `SET`, a Redis PING, a 50 ms polling loop, a peer library), because on a shared machine absolute ' +
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
      '`BENCH_ONLY=endpoint,store,waiters,e2e,memory,peer` selects sections (a partial run only prints).',
    `- Machine: ${env.machine}.`,
    `- Unit costs measured at the start: ${env.probes}.`,
    `- Node ${env.node}; Redis ${env.redis}, shared with other users of the machine (every key of the run is under its own prefix and deleted at the end).`,
    `- Packages: ${env.packages.map(([name, version]) => `${name} ${version}`).join(', ')}.`,
    `- Commit ${env.commit}; the whole run took ${seconds.toFixed(0)} s; load average at the end ${loadavg().map((l) => l.toFixed(2)).join(' ')} ` +
      `(on ${cpus().length} cores: other work on the machine competes with every figure, which is why each one is read against a baseline from the same run).`,
    `- Every figure is the median of ${SETTINGS.runs} runs (${SETTINGS.httpRuns} for the HTTP load of sections 1 and 6), with the spread as min-max where it matters; ratios are computed run by run (same round), then their median.`,
    '',
  );
  for (const result of results) {
    out.push(`## ${result.title}`, '', result.method, '');
    for (const table of result.tables) out.push(markdownTable(table), '');
    for (const target of result.targets) out.push(`- Target ${mark(target.met).toLowerCase()}: ${target.what}: ${target.detail}.`);
    if (result.targets.length > 0) out.push('');
    for (const note of result.notes) out.push(`- ${note}`);
    if (result.notes.length > 0) out.push('');
    for (const profile of result.profiles) out.push(`### ${profile.title}`, '', profile.markdown, '');
  }
  return `${out.join('\n').replace(/\n{3,}/g, '\n\n').trimEnd()}\n`;
}
