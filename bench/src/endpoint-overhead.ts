import { fmtRoundTrips, freshVariant, replayVariant, startServer, type EndpointServer } from './endpoint-servers';
import { measureInterleaved, profileVariants } from './measure-interleaved';
import { createOrdersTable, pgHost, type OrdersTable } from './pg-tools';
import { mark, type SectionResult, type Target } from './report';
import { cleanUpPrefix, RUN_PREFIX } from './redis-tools';
import { SETTINGS } from './settings';
import { fmt, type Figure } from './stats';

const { signed } = fmt;

const BARE = 'bare';
const FIRST = 'first execution';
const REPLAY = 'replay';
const PG_BARE = 'bare + PostgreSQL insert';
const PG_FIRST = 'first execution + PostgreSQL insert';
/** Each variant against the bare endpoint doing the same work. */
const BASELINE: Record<string, string> = { [BARE]: BARE, [FIRST]: BARE, [REPLAY]: BARE, [PG_BARE]: PG_BARE, [PG_FIRST]: PG_BARE };

const TARGET = { first: 0.7, replay: 0.95, pgFirst: 0.85, cpuOverBareUs: 80, tripsFirst: 2, tripsReplay: 1 };

const runsOf = (f: Figure, one: (n: number) => string) => `runs: ${f.runs.map(one).join(', ')}`;

/**
 * (1) Per-request overhead: the same endpoint bare and under `@Idempotent`
 * with a fresh key per request (every request executes: claim + complete)
 * and with one key repeated (every request is a replay: one claim); then
 * both with a handler that inserts one row into PostgreSQL, a real endpoint's
 * cost, where the guard's share is what a user actually pays.
 */
export async function endpointOverhead(log: (line: string) => void): Promise<SectionResult> {
  const prefix = `${RUN_PREFIX}endpoint:`;
  const servers: EndpointServer[] = [];
  let table: OrdersTable | undefined;
  try {
    table = await createOrdersTable();
    log(`  starting the bare and @Idempotent servers, no-op and PostgreSQL handlers (child processes; table ${table.name})`);
    const cpus = SETTINGS.serverCpus;
    const pg = { prefix, work: 'pg', table: table.name, cpus } as const;
    const [bare, ours, pgBare, pgOurs] = await Promise.all([
      startServer('bare', { prefix, cpus }),
      startServer('ours', { prefix, cpus }),
      startServer('bare', pg),
      startServer('ours', pg),
    ]);
    servers.push(bare, ours, pgBare, pgOurs);
    const stamp = Date.now().toString(36);
    const variants = [
      freshVariant(BARE, bare, 'b'),
      freshVariant(FIRST, ours, `f${stamp}-`),
      replayVariant(REPLAY, ours, `r${stamp}`),
      freshVariant(PG_BARE, pgBare, 'pb'),
      freshVariant(PG_FIRST, pgOurs, `pf${stamp}-`),
    ];
    const m = await measureInterleaved(variants, log);
    const executions = async () => (await pgBare.stats()).handled + (await pgOurs.stats()).handled;
    const inserted = await table.settle(executions);
    if (inserted.rows !== inserted.expected)
      throw new Error(`${table.name} holds ${inserted.rows} rows for ${inserted.expected} executions of the PostgreSQL handlers`);

    const vsBare = (name: string) => m.ratio(name, BASELINE[name]!);
    const cpuOver = (name: string) => m.difference(name, BASELINE[name]!, 'cpuUs');
    const rows = variants.map(({ name }) => [
      name,
      fmt.spread(m.figure(name), fmt.int),
      BASELINE[name] === name ? '1.00x' : fmt.spread(vsBare(name), fmt.ratio),
      fmt.ms(m.figure(name, 'p50').median),
      fmt.ms(m.figure(name, 'p99').median),
      `${fmt.int(m.figure(name, 'cpuUs').median)} µs`,
      BASELINE[name] === name ? '' : `${signed(cpuOver(name).median)} µs`,
      m.roundTrips(name).perRequest.toFixed(2),
    ]);
    const ratioTarget = (what: string, name: string, target: number): Target => {
      const r = vsBare(name);
      return {
        what: `${what} >= ${target.toFixed(2)}x`,
        met: r.median >= target,
        detail: `${fmt.ratio(r.median)} (${runsOf(r, fmt.ratio)})`,
      };
    };
    const tripsTarget = (what: string, name: string, target: number): Target => {
      const trips = m.roundTrips(name);
      return { what: `Redis round trips per ${what} <= ${target}`, met: trips.perRequest <= target, detail: fmtRoundTrips(trips) };
    };
    const cpuFirst = cpuOver(FIRST);
    const targets: Target[] = [
      ratioTarget('first execution vs bare (no-op handler)', FIRST, TARGET.first),
      ratioTarget('replay vs bare (no-op handler)', REPLAY, TARGET.replay),
      ratioTarget('first execution vs bare, both inserting one PostgreSQL row', PG_FIRST, TARGET.pgFirst),
      {
        what: `server CPU per first execution over bare <= +${TARGET.cpuOverBareUs} µs`,
        met: cpuFirst.median <= TARGET.cpuOverBareUs,
        detail: `${signed(cpuFirst.median)} µs (${runsOf(cpuFirst, (n) => `${signed(n)} µs`)})`,
      },
      tripsTarget('first execution (claim + complete)', FIRST, TARGET.tripsFirst),
      tripsTarget('replay', REPLAY, TARGET.tripsReplay),
    ];

    const profiles: SectionResult['profiles'] = [];
    const [firstMet, replayMet, , cpuMet] = targets.map((t) => t.met);
    if (!firstMet || !replayMet || !cpuMet) {
      log(
        `  target ${mark(false)}: ${targets
          .filter((t) => !t.met)
          .map((t) => t.what)
          .join('; ')} -> profiling the servers`,
      );
      const focus = firstMet && cpuMet ? REPLAY : FIRST;
      const profiled = variants.filter((v) => v.name === BARE || v.name === focus || (!replayMet && v.name === REPLAY));
      profiles.push({
        title: `Where the time goes: CPU profile of the server, bare vs @Idempotent (${SETTINGS.durationS} s at ${SETTINGS.connections} connections each)`,
        markdown: await profileVariants(profiled, focus, log),
      });
    }
    const addedP50 = (name: string) => `${signed(m.difference(name, BASELINE[name]!, 'p50').median, 2)} ms`;
    return {
      id: 'endpoint',
      headline:
        `**Per request** (NestJS + Fastify, ${SETTINGS.connections} connections, a handler that does nothing): a first execution adds ${addedP50(FIRST)} to the median latency ` +
        `and ${signed(cpuFirst.median)} µs of server CPU (${m.roundTrips(FIRST).perRequest.toFixed(0)} Redis round trips), keeping ${fmt.ratio(vsBare(FIRST).median)} of bare throughput; ` +
        `a replay adds ${addedP50(REPLAY)} and ${signed(cpuOver(REPLAY).median)} µs (${m.roundTrips(REPLAY).perRequest.toFixed(0)} round trip), ${fmt.ratio(vsBare(REPLAY).median)} of bare. ` +
        `With a handler that inserts one PostgreSQL row, a first execution keeps ${fmt.ratio(vsBare(PG_FIRST).median)} of bare throughput.`,
      title: '1. Per-request overhead: one Fastify NestJS endpoint, bare vs @Idempotent',
      method:
        `\`POST /orders\` in a NestJS 12 + Fastify child process per variant's server; autocannon in a process of its own (${SETTINGS.loadCpus ? `pinned to core ${SETTINGS.loadCpus}, the servers to core ${SETTINGS.serverCpus}` : 'one core: not pinned'}), ${SETTINGS.connections} connections, a new key per request from autocannon's \`[<id>]\`, ` +
        `${SETTINGS.durationS} s measured per run after a warm-up (${SETTINGS.warmupS} s before the first run, ${SETTINGS.rewarmS} s before the others), ${SETTINGS.httpRuns} runs per variant, interleaved round by round. ` +
        '`first execution`: a new `Idempotency-Key` per request (claim + complete on Redis). `replay`: one key, stored before the runs. ' +
        `\`+ PostgreSQL insert\`: the handler first inserts the order into a table of the run's own (\`pg\` pool, default size) on the PostgreSQL at \`${pgHost()}\`; the guard is the same \`RedisStore\`. ` +
        'Throughput: median (min-max) of runs; "vs bare" is computed run by run against the bare run doing the same work in the same round, then the median; ' +
        "latency: autocannon's per-response timer, percentiles per run, median of runs; server CPU: as the kernel counts it for the server process; " +
        `Redis commands: counted by a hook on the server's client over ${SETTINGS.roundTripSample} sequential requests per variant.`,
      tables: [{ headers: ['variant', 'req/s', 'vs bare', 'p50', 'p99', 'server CPU/req', 'CPU over bare', 'Redis cmds/req'], rows }],
      targets,
      notes: [
        `Redis commands per request: first execution ${fmtRoundTrips(m.roundTrips(FIRST))}; replay ${fmtRoundTrips(m.roundTrips(REPLAY))}; with the PostgreSQL handler ${fmtRoundTrips(m.roundTrips(PG_FIRST))}.`,
        `Server CPU moves with the machine's load less than throughput does, but it moves (bare: ${fmt.spread(m.figure(BARE, 'cpuUs'), fmt.int)} µs); its difference over bare is taken run by run.`,
        `Checked: the PostgreSQL table holds exactly one row per execution the handlers counted (${fmt.int(inserted.rows)} rows), so every fresh key executed once and every insert is in the figures.`,
        "With the no-op handler the guard's cost is the whole difference: the worst case for its share, and a replay replaces a handler that costs nothing with one Redis round trip. " +
          'With a real write in the handler the same guard costs the same in absolute terms, and a smaller share of each request.',
      ],
      profiles,
      charts: [],
    };
  } finally {
    await Promise.all(servers.map((s) => s.child.stop()));
    await table?.drop();
    log(`  cleaned up ${await cleanUpPrefix(prefix)} keys${table ? ` and dropped ${table.name}` : ''}`);
  }
}
