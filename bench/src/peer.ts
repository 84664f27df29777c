import { sideBySideChart, type LibraryPoint } from './chart-specs';
import { fmtRoundTrips, freshVariant, replayVariant, startServer, type EndpointServer, type Mode, type Variant } from './endpoint-servers';
import { versionOf } from './environment';
import { measureInterleaved, profileVariants } from './measure-interleaved';
import type { SectionResult, Target } from './report';
import { cleanUpPrefix, RUN_PREFIX } from './redis-tools';
import { SETTINGS } from './settings';
import { fmt } from './stats';

const BARE = 'bare';
const KINDS = ['first execution', 'replay'] as const;
const LIBRARIES: Array<{ label: string; mode: Exclude<Mode, 'bare'> }> = [
  { label: 'ours', mode: 'ours' },
  { label: 'node-idempotency', mode: 'node-idempotency' },
  { label: 'Powertools', mode: 'powertools' },
];
/** The peer each of ours' figures must at least match, and by how much. */
const TARGET = { peer: 'node-idempotency', ratio: 1.0 };

const nameOf = (library: string, kind: string) => `${library}: ${kind}`;
const OURS = (kind: string) => nameOf('ours', kind);

/**
 * (6) The peers side by side: the endpoint of (1) bare, under ours, under
 * `@node-idempotency/nestjs` and under Powertools' `makeIdempotent`, each in
 * its own process, same Redis, same load, interleaved in the same rounds.
 */
export async function peerComparison(log: (line: string) => void): Promise<SectionResult> {
  const prefix = `${RUN_PREFIX}peer:`;
  const servers: EndpointServer[] = [];
  try {
    log(`  starting the bare, ${LIBRARIES.map((l) => l.label).join(', ')} servers (child processes)`);
    const cpus = SETTINGS.serverCpus;
    const started = await Promise.all([
      startServer('bare', { prefix, cpus }),
      ...LIBRARIES.map((l) => startServer(l.mode, { prefix, cpus })),
    ]);
    servers.push(...started);
    const [bare, ...guarded] = started;
    const stamp = Date.now().toString(36);
    const variants: Variant[] = [freshVariant(BARE, bare, 'b')];
    for (const kind of KINDS) {
      LIBRARIES.forEach(({ label }, i) => {
        const keys = `${label.slice(0, 2)}${kind === 'replay' ? 'r' : 'f'}${stamp}`;
        variants.push(
          kind === 'replay'
            ? replayVariant(nameOf(label, kind), guarded[i]!, keys)
            : freshVariant(nameOf(label, kind), guarded[i]!, `${keys}-`),
        );
      });
    }
    const m = await measureInterleaved(variants, log);

    const kindOf = (name: string) => KINDS.find((k) => name.endsWith(k));
    const oursOver = (name: string, metric: 'rps' | 'p99') => {
      const kind = kindOf(name);
      return kind && name !== OURS(kind) ? fmt.ratio(m.ratio(OURS(kind), name, metric).median) : '';
    };
    const rows = variants.map(({ name }) => [
      name,
      fmt.spread(m.figure(name), fmt.int),
      name === BARE ? '1.00x' : fmt.ratio(m.ratio(name, BARE).median),
      oursOver(name, 'rps'),
      fmt.ms(m.figure(name, 'p50').median),
      fmt.ms(m.figure(name, 'p99').median),
      oursOver(name, 'p99'),
      `${fmt.int(m.figure(name, 'cpuUs').median)} µs`,
      m.roundTrips(name).perRequest.toFixed(2),
    ]);
    const targets: Target[] = KINDS.map((kind) => {
      const r = m.ratio(OURS(kind), nameOf(TARGET.peer, kind));
      return {
        what: `${kind} vs @node-idempotency/nestjs >= ${TARGET.ratio.toFixed(2)}x`,
        met: r.median >= TARGET.ratio,
        detail: `${fmt.ratio(r.median)} of its throughput (runs: ${r.runs.map(fmt.ratio).join(', ')})`,
      };
    });
    const profiles: SectionResult['profiles'] = [];
    for (const [i, kind] of KINDS.entries()) {
      if (targets[i]!.met) continue;
      log(`  target MISSED: ${targets[i]!.what} -> profiling both servers`);
      const profiled = [nameOf(TARGET.peer, kind), OURS(kind)].map((name) => variants.find((v) => v.name === name)!);
      profiles.push({
        title: `Where the time goes: CPU profile of the server, ${TARGET.peer} vs ours, ${kind} (${SETTINGS.durationS} s at ${SETTINGS.connections} connections each)`,
        markdown: await profileVariants(profiled, OURS(kind), log),
      });
    }
    const points: LibraryPoint[] = KINDS.flatMap((request) => [
      { library: 'bare (no idempotency)', request, rps: m.figure(BARE).median, p99: m.figure(BARE, 'p99').median },
      ...LIBRARIES.map(({ label }) => ({
        library: label,
        request,
        rps: m.figure(nameOf(label, request)).median,
        p99: m.figure(nameOf(label, request), 'p99').median,
      })),
    ]);
    const ratios = (peer: string) => KINDS.map((kind) => fmt.ratio(m.ratio(OURS(kind), nameOf(peer, kind)).median));
    const trips = (label: string) => KINDS.map((kind) => `${kind} ${fmtRoundTrips(m.roundTrips(nameOf(label, kind)))}`).join(', ');
    return {
      id: 'peer',
      headline:
        `**Against the peers** under the same load, ours has ${ratios('node-idempotency').join(' / ')} the throughput of @node-idempotency/nestjs ` +
        `and ${ratios('Powertools').join(' / ')} that of Powertools' makeIdempotent (first executions / replays), ` +
        `in ${KINDS.map((kind) => m.roundTrips(OURS(kind)).perRequest.toFixed(0)).join(' / ')} Redis round trips against their ${KINDS.map((kind) => m.roundTrips(nameOf('node-idempotency', kind)).perRequest.toFixed(0)).join(' / ')} and ${KINDS.map((kind) => m.roundTrips(nameOf('Powertools', kind)).perRequest.toFixed(0)).join(' / ')}.`,
      title: `6. The peers side by side: @node-idempotency/nestjs ${versionOf('@node-idempotency/nestjs')} and Powertools ${versionOf('@aws-lambda-powertools/idempotency')} vs ours`,
      method:
        'The endpoint of (1) with the no-op handler, four ways, each in its own child process, same Redis, same autocannon load ' +
        `(${SETTINGS.connections} connections, ${SETTINGS.durationS} s, ${SETTINGS.httpRuns} interleaved rounds): bare; ours (\`@Idempotent\` on a \`RedisStore\`, ioredis); ` +
        "`@node-idempotency/nestjs` (its `@Idempotent` and `redis` adapter, node-redis 4); Powertools for AWS Lambda's idempotency utility as a Nest user wires it " +
        "(`makeIdempotent` around the handler's work, its cache persistence layer on a `@redis/client` connection, keyed on the `Idempotency-Key` header with `eventKeyJmesPath`, " +
        'an in-flight duplicate mapped to 409). "ours / this" is ours\' figure over this variant\'s for the same kind of request, run by run: ' +
        `above 1x for throughput, or below 1x for p99, means ours is faster. Redis commands per request are counted over ${SETTINGS.roundTripSample} sequential requests per variant.`,
      tables: [
        {
          headers: [
            'variant',
            'req/s',
            'vs bare',
            'ours / this (req/s)',
            'p50',
            'p99',
            'ours / this (p99)',
            'server CPU/req',
            'Redis cmds/req',
          ],
          rows,
        },
      ],
      targets,
      notes: [
        `Redis commands per request: ${LIBRARIES.map(({ label }) => `${label}: ${trips(label)}`).join('; ')} (the peers' client calls, one Redis command each).`,
        'Not like for like in what is guaranteed. @node-idempotency/nestjs answers a duplicate in flight with 409 at once (no waiting for the shared result), ' +
          'holds an in-progress key for its whole TTL after a crash (no lease, no heartbeat), completes without an owner check, and writes the raw key and path into the Redis key name. ' +
          "Powertools also refuses a duplicate in flight at once, bounds an in-progress record by the Lambda invocation's remaining time (here a fixed 30 s window, there being no Lambda), " +
          "completes and deletes with a plain `SET`/`DEL` (no owner check, no fencing) and stores the handler's return value, not the HTTP answer; " +
          'its payload validation is left off, because in this version its cache layer drops the validation hash when a record completes and every replay would be refused ' +
          '(aws-powertools/powertools-lambda-typescript#5705), so a key reused with another body is replayed, not refused. ' +
          'Ours waits for in-flight duplicates, fences completions, stores the answer as it went on the wire, and pays for a Lua script per step, a SHA-256 of the canonical request and of the key identity, and metrics.',
      ],
      profiles,
      charts: [
        sideBySideChart(points, `${SETTINGS.connections} connections, no-op handler, medians of ${SETTINGS.httpRuns} interleaved runs`),
      ],
    };
  } finally {
    await Promise.all(servers.map((s) => s.child.stop()));
    log(`  cleaned up ${await cleanUpPrefix(prefix)} keys`);
  }
}
