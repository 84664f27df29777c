import { startChargeServer, type AppShape, type ChargeServer, type Library } from './deployed-servers';
import { loadInProcessOfItsOwn, type LoadJob } from './load-process';
import { Measured, type MeasuredRun } from './measured';
import type { SectionResult, Target } from './report';
import { cleanUpPrefix, connect, redisCpuMs, RUN_PREFIX } from './redis-tools';
import { SETTINGS } from './settings';
import { fmt } from './stats';

const { signed } = fmt;
const BARE = 'bare';
const PEER = 'node-idempotency';
const KINDS = ['first execution', 'replay'] as const;
const TARGET = { ratio: 1.0, cpuOverBareUs: 60 };
/** Every caller of the app sends its credentials: ours' default scope is the caller. */
const CALLER = { authorization: 'Bearer caller-7' };
const BODY = JSON.stringify({ orderId: 'order-bench', amountCents: 500 });

interface Variant {
  name: string;
  server: ChargeServer;
  key: LoadJob['key'];
}

const nameOf = (library: string, kind: string) => `${library}: ${kind}`;

/** The shapes a user deploys: the README's wiring on Fastify, the same with traces, and on Express. */
const SHAPES: Array<{ label: string; shape: AppShape }> = [
  { label: 'Fastify', shape: { adapter: 'fastify', otel: false } },
  { label: 'Fastify + TracingObserver', shape: { adapter: 'fastify', otel: true } },
  { label: 'Express', shape: { adapter: 'express', otel: false } },
];

/**
 * A reading awaited only once the run is over: handled from the start, so
 * that its failure (a stalled Redis) fails the section when awaited instead
 * of ending the process as an unhandled rejection in the meantime.
 */
function reading<T>(pending: Promise<T>): Promise<T> {
  pending.catch(() => undefined);
  return pending;
}

/** One shape's measurement: its table rows (each variant's name led by the shape), targets and headline figures. */
interface ShapeResult {
  rows: string[][];
  targets: Target[];
  ratios: string;
  cpuFirst: number;
  ceilingFirst: number;
  measuredFirst: number;
  /** Redis's CPU per first execution: ours, then the peer's. */
  redisFirst: [number, number];
}

/**
 * (11) The app a user deploys, one per library, measured the way a user
 * measures it: `fixtures/charge-server` (one route behind an auth guard,
 * each library wired as its README shows, nothing of the benchmark's
 * inside) for bare, ours and @node-idempotency/nestjs; autocannon from a
 * process of its own on the other core; first executions (autocannon's
 * `[<id>]`) and replays (one key, stored first), interleaved round by round.
 * Every answer must be a 201: a refusal counted as throughput would flatter
 * whoever refuses.
 */
export async function deployedComparison(log: (line: string) => void): Promise<SectionResult> {
  const results: ShapeResult[] = [];
  for (const { label, shape } of SHAPES) {
    log(`  ${label}`);
    results.push(await measureShape(label, shape, log));
  }
  const [fastify] = results as [ShapeResult];
  return {
    id: 'deployed',
    headline:
      `**As deployed** (one charge app per library as its README wires it, autocannon from its own process on the other core): ours has ` +
      `${SHAPES.map(({ label }, i) => `${results[i]!.ratios} on ${label}`).join(', ')} the throughput of @node-idempotency/nestjs (first executions / replays); ` +
      `on Fastify a first execution costs ${signed(fastify.cpuFirst)} µs of server CPU over bare, which caps it at ${fmt.ratio(fastify.ceilingFirst)} of bare's throughput on this machine (measured: ${fmt.ratio(fastify.measuredFirst)}); ` +
      `Redis spends ${fmt.int(fastify.redisFirst[0])} µs of CPU per first execution of ours and ${fmt.int(fastify.redisFirst[1])} µs per one of @node-idempotency/nestjs's, on the same two cores.`,
    title: '11. As deployed: a one-route charge app per library, measured from outside',
    method:
      '`POST /charges` in `fixtures/charge-server`, one NestJS 12 process per library: bare; ours as its README wires it ' +
      '(`IdempotencyModule.forRoot` with the default options, so the default per-caller scope, behind an auth guard that names the caller; `ProblemDetailsFilter`); ' +
      '@node-idempotency/nestjs with its Redis adapter and its defaults. No stats route and no command hooks in any of them. ' +
      `Three shapes, each measured on its own: ${SHAPES.map((s) => s.label).join('; ')} (ours adds \`TracingObserver\` under an OpenTelemetry SDK provider whose batches are dropped; the others are as on Fastify). ` +
      `autocannon in a process of its own (${SETTINGS.loadCpus ? `pinned to core ${SETTINGS.loadCpus}, the servers to core ${SETTINGS.serverCpus}` : 'not pinned: one core'}), ${SETTINGS.connections} connections, ` +
      `${SETTINGS.durationS} s per run after a warm-up, ${SETTINGS.httpRuns} interleaved rounds; first executions send autocannon's \`[<id>]\` as the key, replays one key stored before the runs. ` +
      'Every answer is checked to be a 201. "ceiling" is bare\'s server CPU per request over this variant\'s, run by run: the throughput ratio to bare ' +
      'a CPU-bound server reaches when its Redis round trips (two per first execution, none per replay of ours) cost no CPU of its own.',
    tables: [
      {
        headers: [
          'variant',
          'req/s',
          'vs bare',
          'ceiling (bare CPU / this)',
          'ours / node-idempotency',
          'p50',
          'p99',
          'server CPU/req',
          'CPU over bare',
          'Redis CPU/req',
        ],
        rows: results.flatMap((r) => r.rows),
      },
    ],
    targets: results.flatMap((r) => r.targets),
    notes: [
      "The floor under ours: two Redis round trips per first execution (claim, complete) and none per replay of a key this process has replayed before; what is left over bare is the library's CPU, which the ceiling column turns into throughput.",
      "Redis CPU/req is the Redis server's CPU time (`INFO cpu`, user and system) over the run, per request, server-wide: each library's commands plus whatever else Redis did meanwhile (bare's row, which sends none, shows that floor). The app's CPU leaves it out, and on this machine it comes out of the same two cores. Ours runs two Lua scripts per first execution (the fenced claim and the completion, each an atomic read-decide-write of several commands); what each library sends per request is counted by name in section 6.",
      "Remaining interference: Redis is a shared service floating over both cores (its share of each request lands on the server's core part of the time), and so is the rest of the machine.",
    ],
    profiles: [],
    charts: [],
  };
}

/**
 * One shape: bare, ours and @node-idempotency/nestjs started as that shape,
 * first executions and replays of each interleaved round by round.
 */
async function measureShape(label: string, shape: AppShape, log: (line: string) => void): Promise<ShapeResult> {
  const prefix = `${RUN_PREFIX}deployed:`;
  const servers: ChargeServer[] = [];
  // Reads Redis's CPU time around each run: the share of a request the app's own CPU leaves out.
  const redis = await connect();
  try {
    const libraries: Library[] = ['bare', 'ours', PEER];
    servers.push(
      ...(await Promise.all(libraries.map((library) => startChargeServer(library, { prefix, cpus: SETTINGS.serverCpus, shape })))),
    );
    const [bare, ours, peer] = servers as [ChargeServer, ChargeServer, ChargeServer];
    const stamp = Date.now().toString(36);
    const variants: Variant[] = [{ name: BARE, server: bare, key: { generated: true } }];
    for (const kind of KINDS) {
      for (const [label, server] of [
        ['ours', ours],
        [PEER, peer],
      ] as const) {
        variants.push({ name: nameOf(label, kind), server, key: kind === 'replay' ? { fixed: `${label}-${stamp}` } : { generated: true } });
      }
    }
    for (const { name, server, key } of variants) {
      if (!('fixed' in key)) continue;
      const seeded = await fetch(`${server.url}/charges`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': key.fixed, ...CALLER },
        body: BODY,
      });
      if (seeded.status !== 201) throw new Error(`${name}: storing the replayed key answered ${seeded.status}`);
    }
    const runs = new Map<string, MeasuredRun[]>(variants.map((v) => [v.name, []]));
    for (let round = 0; round < SETTINGS.httpRuns; round++) {
      for (const [i] of variants.entries()) {
        const variant = variants[(i + round) % variants.length]!;
        const { child, url } = variant.server;
        let cpuBefore = Number.NaN;
        let cpuAfter = Number.NaN;
        let redisBefore: Promise<number> = Promise.resolve(Number.NaN);
        let redisAfter: Promise<number> = Promise.resolve(Number.NaN);
        const loaded = await loadInProcessOfItsOwn(
          {
            url,
            path: '/charges',
            headers: CALLER,
            connections: SETTINGS.connections,
            warmupS: round === 0 ? SETTINGS.warmupS : SETTINGS.rewarmS,
            durationS: SETTINGS.durationS,
            key: variant.key,
          },
          {
            cpus: SETTINGS.loadCpus,
            onMeasuring: () => {
              cpuBefore = child.cpuMs();
              redisBefore = reading(redisCpuMs(redis));
            },
            onDone: () => {
              cpuAfter = child.cpuMs();
              redisAfter = reading(redisCpuMs(redis));
            },
          },
        );
        if (loaded.failures > 0)
          throw new Error(`${variant.name}: ${loaded.failures} answers were not 2xx (${JSON.stringify(loaded.statusCodes)})`);
        const redisCpuUs = (((await redisAfter) - (await redisBefore)) * 1000) / loaded.total;
        const run: MeasuredRun = { ...loaded, cpuUs: ((cpuAfter - cpuBefore) * 1000) / loaded.total, redisCpuUs };
        runs.get(variant.name)!.push(run);
        log(
          `  round ${round + 1}/${SETTINGS.httpRuns} ${variant.name.padEnd(36)} ${Math.round(run.rps).toString().padStart(6)} req/s  server CPU ${Math.round(run.cpuUs)} µs/req  Redis CPU ${Math.round(redisCpuUs)} µs/req`,
        );
      }
    }
    const m = new Measured(new Map([...runs].map(([name, r]) => [name, { runs: r, roundTrips: { perRequest: Number.NaN, byName: {} } }])));
    const cpuOver = (name: string) => m.difference(name, BARE, 'cpuUs');
    // CPU-bound, a server answers at most 1 / (its CPU per request): bare's CPU over ours' is the throughput ratio left once Redis waits cost nothing.
    const ceiling = (name: string) => m.ratio(BARE, name, 'cpuUs');
    const oursOverPeer = (kind: string) => m.ratio(nameOf('ours', kind), nameOf(PEER, kind));
    const rows = variants.map(({ name }) => [
      name,
      fmt.spread(m.figure(name), fmt.int),
      name === BARE ? '1.00x' : fmt.ratio(m.ratio(name, BARE).median),
      name === BARE ? '1.00x' : fmt.ratio(ceiling(name).median),
      name.startsWith('ours') ? fmt.ratio(oursOverPeer(KINDS.find((k) => name.endsWith(k))!).median) : '',
      fmt.ms(m.figure(name, 'p50').median),
      fmt.ms(m.figure(name, 'p99').median),
      `${fmt.int(m.figure(name, 'cpuUs').median)} µs`,
      name === BARE ? '' : `${signed(cpuOver(name).median)} µs`,
      `${fmt.int(m.figure(name, 'redisCpuUs').median)} µs`,
    ]);
    const cpuFirst = cpuOver(nameOf('ours', 'first execution'));
    const targets: Target[] = [
      ...KINDS.map((kind) => {
        const r = oursOverPeer(kind);
        return {
          what: `deployed app, ${label}: ${kind} vs @node-idempotency/nestjs >= ${TARGET.ratio.toFixed(2)}x`,
          met: r.median >= TARGET.ratio,
          detail: `${fmt.ratio(r.median)} (runs: ${r.runs.map(fmt.ratio).join(', ')})`,
        };
      }),
      {
        what: `deployed app, ${label}: server CPU per first execution over bare <= +${TARGET.cpuOverBareUs} µs`,
        met: cpuFirst.median <= TARGET.cpuOverBareUs,
        detail: `${signed(cpuFirst.median)} µs (runs: ${cpuFirst.runs.map((n) => `${signed(n)} µs`).join(', ')})`,
      },
    ];
    const first = nameOf('ours', 'first execution');
    return {
      rows: rows.map(([name, ...cells]) => [`${label}: ${name}`, ...cells]),
      targets,
      ratios: KINDS.map((kind) => fmt.ratio(oursOverPeer(kind).median)).join(' / '),
      cpuFirst: cpuFirst.median,
      ceilingFirst: ceiling(first).median,
      measuredFirst: m.ratio(first, BARE).median,
      redisFirst: [m.figure(first, 'redisCpuUs').median, m.figure(nameOf(PEER, 'first execution'), 'redisCpuUs').median],
    };
  } finally {
    await Promise.all(servers.map((s) => s.child.stop()));
    redis.disconnect();
    log(`  cleaned up ${await cleanUpPrefix(prefix)} keys`);
  }
}
