import { fmtCommands } from './endpoint-overhead';
import { freshVariant, measureInterleaved, replayVariant, startServer, type EndpointServer, type VariantRuns } from './endpoint-servers';
import type { SectionResult } from './report';
import { cleanUpPrefix, RUN_PREFIX } from './redis-tools';
import { SETTINGS } from './settings';
import { figure, fmt } from './stats';

/**
 * (6) A peer side by side: the same endpoint guarded by
 * `@node-idempotency/nestjs` (its Redis adapter) and by ours, same load,
 * same Redis, interleaved in the same rounds.
 */
export async function peerComparison(log: (line: string) => void): Promise<SectionResult> {
  const prefix = `${RUN_PREFIX}peer:`;
  const servers: EndpointServer[] = [];
  try {
    log('  starting the @idempotency-chain and @node-idempotency servers (child processes)');
    const [ours, peer] = await Promise.all([startServer('ours', prefix), startServer('peer', prefix)]);
    servers.push(ours, peer);
    const stamp = Date.now().toString(36);
    const variants = [
      freshVariant('ours: first execution', ours, `of${stamp}-`),
      freshVariant('peer: first execution', peer, `pf${stamp}-`),
      replayVariant('ours: replay', ours, `or${stamp}`),
      replayVariant('peer: replay', peer, `pr${stamp}`),
    ];
    const results = await measureInterleaved(variants, log);
    const get = (name: string) => results.get(name) as VariantRuns;
    const runRatio = (a: string, b: string, pick: (r: VariantRuns['runs'][number]) => number) =>
      figure(get(a).runs.map((run, i) => pick(run) / pick(get(b).runs[i] ?? run)));

    const rows = (['first execution', 'replay'] as const).map((kind) => {
      const ours = `ours: ${kind}`;
      const peer = `peer: ${kind}`;
      const med = (name: string, pick: (r: VariantRuns['runs'][number]) => number) => figure(get(name).runs.map(pick)).median;
      return [
        kind,
        fmt.int(med(ours, (r) => r.rps)),
        fmt.int(med(peer, (r) => r.rps)),
        fmt.ratio(runRatio(ours, peer, (r) => r.rps).median),
        `${fmt.ms(med(ours, (r) => r.p50))} / ${fmt.ms(med(peer, (r) => r.p50))}`,
        fmt.ratio(runRatio(ours, peer, (r) => r.p50).median),
        `${fmt.ms(med(ours, (r) => r.p99))} / ${fmt.ms(med(peer, (r) => r.p99))}`,
        fmt.ratio(runRatio(ours, peer, (r) => r.p99).median),
        `${fmt.int(med(ours, (r) => r.cpuUs))} µs / ${fmt.int(med(peer, (r) => r.cpuUs))} µs`,
        fmt.ratio(runRatio(ours, peer, (r) => r.cpuUs).median),
        `${get(ours).commandsPerRequest.toFixed(2)} / ${get(peer).commandsPerRequest.toFixed(2)}`,
      ];
    });
    const throughput = (kind: string) => fmt.ratio(runRatio(`ours: ${kind}`, `peer: ${kind}`, (r) => r.rps).median);
    return {
      id: 'peer',
      headline: `**Against @node-idempotency/nestjs** under the same load: ours has ${throughput('first execution')} its throughput on first executions and ${throughput('replay')} on replays (ours waits for in-flight duplicates, fences completions and replays in 1 round trip instead of 2).`,
      title: '6. A peer side by side: @node-idempotency/nestjs 1.0.4 (Redis adapter) vs ours',
      method:
        `The endpoint of (1), once under our \`@Idempotent\` (ioredis, \`RedisStore\`) and once under \`@node-idempotency/nestjs\` ` +
        '(its `redis` adapter, node-redis v4), each in its own child process, same Redis, same autocannon load ' +
        `(${SETTINGS.connections} connections, ${SETTINGS.durationS} s, ${SETTINGS.httpRuns} interleaved runs). Ratios are ours / peer, run by run: ` +
        'above 1x for throughput, or below 1x for latency and CPU, means ours is faster. Server CPU per request is counted by the kernel for each server process.',
      tables: [
        {
          headers: ['request', 'ours req/s', 'peer req/s', 'throughput ours/peer', 'p50 ours / peer', 'p50 ours/peer', 'p99 ours / peer', 'p99 ours/peer', 'server CPU/req ours / peer', 'CPU ours/peer', 'Redis cmds/req ours / peer'],
          rows,
        },
      ],
      targets: [],
      notes: [
        `Round trips per request: ours first ${fmtCommands(get('ours: first execution'))}, replay ${fmtCommands(get('ours: replay'))}; ` +
          `peer first ${fmtCommands(get('peer: first execution'))}, replay ${fmtCommands(get('peer: replay'))} (the peer's adapter calls, one Redis command each).`,
        'Not like for like in what is guaranteed: the peer answers a duplicate in flight with 409 at once (no waiting for the shared result), ' +
          'holds an in-progress key for its whole TTL after a crash (no lease, no heartbeat), has no owner check or fencing on completion, ' +
          'and writes the raw key and path into the Redis key name; ours pays for a Lua script per step, a SHA-256 of the canonical body and of the key identity, and metrics.',
      ],
      profiles: [],
    };
  } finally {
    await Promise.all(servers.map((s) => s.child.stop()));
    log(`  cleaned up ${await cleanUpPrefix(prefix)} keys`);
  }
}
