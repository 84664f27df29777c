import { freshVariant, measureInterleaved, profileVariants, replayVariant, startServer, type EndpointServer, type VariantRuns } from './endpoint-servers';
import { mark, type SectionResult } from './report';
import { cleanUpPrefix, RUN_PREFIX } from './redis-tools';
import { SETTINGS } from './settings';
import { figure, fmt, ratio } from './stats';

const FIRST_TARGET = 0.8;

/**
 * (1) Per-request overhead: the same endpoint bare, under `@Idempotent` with
 * a fresh key per request (every request executes: claim + complete), and
 * with one key repeated (every request is a replay: one claim).
 */
export async function endpointOverhead(log: (line: string) => void): Promise<SectionResult> {
  const prefix = `${RUN_PREFIX}endpoint:`;
  const servers: EndpointServer[] = [];
  try {
    log('  starting the bare and @Idempotent servers (child processes)');
    const [bare, ours] = await Promise.all([startServer('bare', prefix), startServer('ours', prefix)]);
    servers.push(bare, ours);
    const variants = [
      freshVariant('bare', bare, 'b'),
      freshVariant('first execution', ours, `f${Date.now().toString(36)}-`),
      replayVariant('replay', ours, `r${Date.now().toString(36)}`),
    ];
    const results = await measureInterleaved(variants, log);
    const get = (name: string) => results.get(name) as VariantRuns;
    const rps = (name: string) => figure(get(name).runs.map((r) => r.rps));
    const p50 = (name: string) => figure(get(name).runs.map((r) => r.p50));
    const p99 = (name: string) => figure(get(name).runs.map((r) => r.p99));
    const cpu = (name: string) => figure(get(name).runs.map((r) => r.cpuUs));
    // Ratios run by run (same round, adjacent in time), then their median.
    const runRatio = (name: string) => figure(get(name).runs.map((r, i) => r.rps / (get('bare').runs[i]?.rps ?? Number.NaN)));

    const firstRatio = runRatio('first execution');
    const replayRatio = runRatio('replay');
    const rows = ['bare', 'first execution', 'replay'].map((name) => [
      name,
      fmt.spread(rps(name), fmt.int),
      name === 'bare' ? '1.00x' : fmt.spread(runRatio(name), fmt.ratio),
      fmt.ms(p50(name).median),
      fmt.ms(p99(name).median),
      fmt.ratio(ratio(p50(name), p50('bare'))),
      `${fmt.int(cpu(name).median)} µs`,
      fmt.ratio(ratio(cpu(name), cpu('bare'))),
      get(name).commandsPerRequest.toFixed(2),
    ]);
    const extra = (name: string) => `+${fmt.int(cpu(name).median - cpu('bare').median)} µs`;
    const targets = [
      {
        what: `first execution keeps >= ${FIRST_TARGET * 100} % of bare throughput`,
        met: firstRatio.median >= FIRST_TARGET,
        detail: `${fmt.pct(firstRatio.median)} (runs: ${firstRatio.runs.map(fmt.pct).join(', ')})`,
      },
      {
        what: 'replay is at least as fast as bare',
        met: replayRatio.median >= 1,
        detail: `${fmt.pct(replayRatio.median)} of bare throughput (runs: ${replayRatio.runs.map(fmt.pct).join(', ')}), p50 ${fmt.ms(p50('replay').median)} vs ${fmt.ms(p50('bare').median)}`,
      },
    ];
    const notes = [
      `Server CPU per request, as the kernel counts it for the server process (it moves with the machine's load less than throughput does, but it moves: spread ${fmt.spread(cpu('bare'), fmt.int)} µs for bare): ` +
        `bare ${fmt.int(cpu('bare').median)} µs, first execution ${fmt.int(cpu('first execution').median)} µs (${extra('first execution')}), ` +
        `replay ${fmt.int(cpu('replay').median)} µs (${extra('replay')}). For a CPU-bound server that predicts throughput ratios of ` +
        `${fmt.pct(ratio(cpu('bare'), cpu('first execution')))} (first execution) and ${fmt.pct(ratio(cpu('bare'), cpu('replay')))} (replay) of bare.`,
      `Redis commands per request, counted by a hook on the server's ioredis client: first execution ${fmtCommands(get('first execution'))}; replay ${fmtCommands(get('replay'))}.`,
      'The handler does no work of its own, so the guard\'s cost is the whole difference: the worst case for its share. ' +
        `For the same reason a replay cannot beat bare here: it replaces a handler that costs nothing with one Redis round trip. It is faster than bare once the handler's own work costs more than the replay's extra ${extra('replay')} of CPU and its round trip; the first execution's share of throughput grows the same way with the handler's cost.`,
    ];
    const profiles: SectionResult['profiles'] = [];
    const missed = targets.filter((t) => !t.met);
    if (missed.length > 0) {
      log(`  target ${mark(false)}: ${missed.map((t) => t.what).join('; ')} -> profiling the servers`);
      const focus = targets[0]!.met ? 'replay' : 'first execution';
      const profiled = variants.filter((v) => v.name === 'bare' || v.name === focus || (!targets[1]!.met && v.name === 'replay'));
      profiles.push({
        title: `Where the time goes: CPU profile of the server, bare vs @Idempotent (${SETTINGS.durationS} s at ${SETTINGS.connections} connections each)`,
        markdown: await profileVariants(profiled, focus, log),
      });
    }
    const addedP50 = (name: string) => `+${fmt.ms(p50(name).median - p50('bare').median)}`;
    const headline =
      `**Per request** (NestJS + Fastify, ${SETTINGS.connections} connections, a handler that does nothing): a first execution adds ${addedP50('first execution')} to the median latency ` +
      `and ${extra('first execution')} of server CPU (2 Redis round trips), keeping ${fmt.pct(firstRatio.median)} of bare throughput; a replay adds ${addedP50('replay')} and ${extra('replay')} ` +
      `(1 round trip), ${fmt.pct(replayRatio.median)} of bare.`;
    return {
      id: 'endpoint',
      headline,
      title: '1. Per-request overhead: one Fastify NestJS endpoint, bare vs @Idempotent',
      method:
        `\`POST /orders\` in a NestJS 11 + Fastify child process; autocannon in the parent, ${SETTINGS.connections} connections, ` +
        `${SETTINGS.durationS} s measured per run after a warm-up (${SETTINGS.warmupS} s before the first run, ${SETTINGS.rewarmS} s before the others), ${SETTINGS.httpRuns} runs per variant, interleaved round by round. ` +
        '`first execution`: a new `Idempotency-Key` per request (claim + complete on Redis). `replay`: one key, stored before the runs. ' +
        'Throughput: median (min-max) of runs; ratios computed run by run against the bare run of the same round; latency: autocannon\'s per-response timer, percentiles per run, median of runs.',
      tables: [{ headers: ['variant', 'req/s', 'vs bare', 'p50', 'p99', 'p50 vs bare', 'server CPU/req', 'CPU vs bare', 'Redis cmds/req'], rows }],
      targets,
      notes,
      profiles,
    };
  } finally {
    await Promise.all(servers.map((s) => s.child.stop()));
    log(`  cleaned up ${await cleanUpPrefix(prefix)} keys`);
  }
}

export function fmtCommands(runs: VariantRuns): string {
  const names = Object.entries(runs.commandNames)
    .filter(([, n]) => n > 0)
    .map(([name, n]) => `${name} ${n}`)
    .join(', ');
  return `${runs.commandsPerRequest.toFixed(2)} per request (${names || 'none'})`;
}
