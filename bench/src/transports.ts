import { join } from 'node:path';
import { Measured, type MeasuredRun } from './measured';
import { freePort, spawnNode, type NodeChild } from './processes';
import type { SectionResult } from './report';
import { cleanUpPrefix, REDIS_URL, RUN_ID, RUN_PREFIX } from './redis-tools';
import { SETTINGS } from './settings';
import { fmt } from './stats';
import { startTransportLoad, type TransportLoad } from './transport-load';
import type { TransportName } from './transport-wiring';

const { signed } = fmt;
const BARE = 'bare';
const FIRST = 'first execution';
const REPLAY = 'replay';

/** Every transport a user protects with `@Idempotent` that runs on this machine (Kafka has no broker here). */
const TRANSPORTS: Array<{ name: TransportName; label: string }> = [
  { name: 'rmq', label: 'RabbitMQ' },
  { name: 'nats', label: 'NATS' },
  { name: 'mqtt', label: 'MQTT 5 (QoS 1)' },
  { name: 'grpc', label: 'gRPC (unary)' },
  { name: 'redis', label: 'Redis transport' },
  { name: 'graphql', label: 'GraphQL (Mercurius on Fastify)' },
];

/** One transport's row and headline figures. */
interface TransportResult {
  label: string;
  row: string[];
  firstRatio: number;
  replayRatio: number;
  cpuFirst: number;
}

/**
 * (12) Per transport: the same one-handler charge service
 * (`fixtures/transport-server`) bare and with `@Idempotent`, each a NestJS
 * process pinned to the server core, called by the transport's own client
 * from a process pinned to the other core with a fixed number of messages
 * in flight (send, await the reply, send the next); first executions (a new
 * key per message) and replays (one key), interleaved round by round. Every
 * reply must be the charge: a refusal counted as throughput would flatter.
 */
export async function transportComparison(log: (line: string) => void): Promise<SectionResult> {
  const results: TransportResult[] = [];
  for (const transport of TRANSPORTS) {
    log(`  ${transport.label}`);
    results.push(await measureTransport(transport, log));
  }
  const range = (pick: (r: TransportResult) => number, one: (n: number) => string) => {
    const values = results.map(pick);
    return `${one(Math.min(...values))} to ${one(Math.max(...values))}`;
  };
  return {
    id: 'transports',
    headline:
      `**Per transport** (${results.map((r) => r.label).join(', ')}; request/reply, ${SETTINGS.transportInFlight} in flight): ` +
      `\`@Idempotent\` keeps ${range((r) => r.firstRatio, fmt.ratio)} of the bare handler's throughput on first executions and ` +
      `${range((r) => r.replayRatio, fmt.ratio)} on replays; a first execution costs ${range(
        (r) => r.cpuFirst,
        (n) => `${signed(n)} µs`,
      )} of server CPU over bare.`,
    title: '12. Per transport: bare handler vs @Idempotent',
    method:
      '`fixtures/transport-server`: one NestJS 12 app per transport and variant, one handler answering a charge; bare, or with ' +
      "`@Idempotent` and `IdempotencyModule.forRoot` with the default options but `scope: 'shared'` (a consumer has no caller to scope by), records on the shared Redis. " +
      'The key travels where each transport carries it: an AMQP header (RabbitMQ, Nest `ClientRMQ`/`ServerRMQ`, replies on direct reply-to), a NATS header, ' +
      'an MQTT 5 user property (QoS 1, Mosquitto), gRPC metadata (unary call, grpc-js), the payload (Redis transport), an HTTP header (a GraphQL mutation, Mercurius on Fastify). ' +
      "The caller (`fixtures/transport-load-worker`: Nest's `ClientProxy` for RabbitMQ, NATS and the Redis transport, mqtt.js in Nest's wire format, grpc-js, Node HTTP for GraphQL) runs " +
      `in a process of its own (${SETTINGS.loadCpus ? `pinned to core ${SETTINGS.loadCpus}, the servers to core ${SETTINGS.serverCpus}` : 'not pinned: one core'}) ` +
      `with ${SETTINGS.transportInFlight} messages in flight, each sent once the reply to the one before it came; ${SETTINGS.transportDurationS} s per run after a warm-up, ` +
      `${SETTINGS.transportRuns} interleaved rounds of bare, first executions (a new key per message) and replays (one key, answered once before the run). ` +
      'Every reply is checked to be the charge. Ratios are ours / bare run by run, then their median; server CPU per message from /proc (utime + stime).',
    tables: [
      {
        headers: [
          'transport',
          'bare msg/s',
          'first execution msg/s',
          'vs bare',
          'CPU over bare',
          'replay msg/s',
          'vs bare',
          'CPU over bare',
          'bare server CPU/msg',
        ],
        rows: results.map((r) => r.row),
      },
    ],
    targets: [],
    notes: [
      "A first execution makes two Redis round trips (claim, complete), a replay of a key this process has replayed before none; with messages in flight those waits overlap, so throughput follows the CPU columns: where the transport costs the bare handler little server CPU (NATS, the Redis transport), the library's CPU per first execution is most of the work.",
      "MQTT's throughput is bound by the broker's round trip (Mosquitto as it runs here; neither core is busy), so its ratios move with the broker: read its CPU columns. Its caller is mqtt.js speaking Nest's wire format: Nest's `ClientMqtt` unsubscribes from the reply topic whenever no request is in flight, and a request sent as that happens can lose its reply (a caller hung for good).",
      "The caller's own client runs on the other core; on the cheapest transports it may be what limits bare's throughput, which then understates the gap in throughput: the CPU columns do not depend on it.",
      'Kafka is supported by the library but not measured: no Kafka broker runs on this machine.',
    ],
    profiles: [],
    charts: [],
  };
}

async function startServer(
  transport: TransportName,
  guarded: boolean,
  { channel, port, prefix }: { channel: string; port: number; prefix: string },
): Promise<NodeChild> {
  const script = join(__dirname, 'fixtures', 'transport-server.js');
  const { child } = await spawnNode(`transport-${transport}-${guarded ? 'ours' : 'bare'}`, script, {
    env: {
      BENCH_TRANSPORT: transport,
      BENCH_GUARDED: guarded ? '1' : '0',
      BENCH_CHANNEL: channel,
      BENCH_PREFIX: prefix,
      PORT: String(port),
      REDIS_URL,
      NODE_ENV: 'production',
    },
    readyLine: /^READY (\d+)$/,
    cpus: SETTINGS.serverCpus,
    // Pinned to one core of a busy machine, a Nest app can take longer than the default to boot.
    timeoutMs: 60_000,
  });
  return child;
}

async function measureTransport(
  { name, label }: { name: TransportName; label: string },
  log: (line: string) => void,
): Promise<TransportResult> {
  const prefix = `${RUN_PREFIX}transports:${name}:`;
  const channel = (variant: string) => `bench.${RUN_ID}.${name}.${variant}`;
  const servers: NodeChild[] = [];
  let load: TransportLoad | undefined;
  try {
    // The servers and the caller start together (the caller's clients connect to the brokers, not to the servers), each told its ports.
    const targets = {
      bare: { channel: channel('bare'), port: await freePort() },
      ours: { channel: channel('ours'), port: await freePort() },
    };
    const [bareStarted, oursStarted, callerStarted] = await Promise.allSettled([
      startServer(name, false, { ...targets.bare, prefix }),
      startServer(name, true, { ...targets.ours, prefix }),
      startTransportLoad({ transport: name, redisUrl: REDIS_URL, inFlight: SETTINGS.transportInFlight, targets }, SETTINGS.loadCpus),
    ]);
    // Whatever started is stopped below, whatever else failed.
    for (const started of [bareStarted, oursStarted]) if (started.status === 'fulfilled') servers.push(started.value);
    if (callerStarted.status === 'fulfilled') load = callerStarted.value;
    for (const started of [bareStarted, oursStarted]) if (started.status === 'rejected') throw started.reason;
    if (callerStarted.status === 'rejected') throw callerStarted.reason;
    const caller = callerStarted.value;
    const [bare, ours] = servers as [NodeChild, NodeChild];
    const stamp = Date.now().toString(36);
    const variants = [
      { name: BARE, target: 'bare', child: bare, key: { perMessage: `bare-${stamp}-` } },
      { name: FIRST, target: 'ours', child: ours, key: { perMessage: `first-${stamp}-` } },
      { name: REPLAY, target: 'ours', child: ours, key: { fixed: `replay-${stamp}` } },
    ];
    const runs = new Map<string, MeasuredRun[]>(variants.map((v) => [v.name, []]));
    for (let round = 0; round < SETTINGS.transportRuns; round++) {
      for (const [i] of variants.entries()) {
        const variant = variants[(i + round) % variants.length]!;
        let cpuBefore = Number.NaN;
        let cpuAfter = Number.NaN;
        const loaded = await caller.run(
          {
            target: variant.target,
            key: variant.key,
            warmupS: round === 0 ? SETTINGS.warmupS : SETTINGS.transportRewarmS,
            durationS: SETTINGS.transportDurationS,
          },
          { onMeasuring: () => (cpuBefore = variant.child.cpuMs()), onDone: () => (cpuAfter = variant.child.cpuMs()) },
        );
        if (loaded.failures > 0 || loaded.total === 0)
          throw new Error(
            `${label}, ${variant.name}: ${loaded.failures} of ${loaded.failures + loaded.total} replies were not the charge (${loaded.firstFailure})`,
          );
        const run: MeasuredRun = { ...loaded, cpuUs: ((cpuAfter - cpuBefore) * 1000) / loaded.total };
        runs.get(variant.name)!.push(run);
        log(
          `  round ${round + 1}/${SETTINGS.transportRuns} ${`${label}: ${variant.name}`.padEnd(50)} ${Math.round(run.rps).toString().padStart(6)} msg/s  server CPU ${Math.round(run.cpuUs)} µs/msg`,
        );
      }
    }
    const m = new Measured(new Map([...runs].map(([n, r]) => [n, { runs: r, roundTrips: { perRequest: Number.NaN, byName: {} } }])));
    const cpuOver = (n: string) => m.difference(n, BARE, 'cpuUs').median;
    const ratio = (n: string) => m.ratio(n, BARE).median;
    const rate = (n: string) => fmt.int(m.figure(n).median);
    return {
      label,
      row: [
        label,
        rate(BARE),
        rate(FIRST),
        fmt.ratio(ratio(FIRST)),
        `${signed(cpuOver(FIRST))} µs`,
        rate(REPLAY),
        fmt.ratio(ratio(REPLAY)),
        `${signed(cpuOver(REPLAY))} µs`,
        `${fmt.int(m.figure(BARE, 'cpuUs').median)} µs`,
      ],
      firstRatio: ratio(FIRST),
      replayRatio: ratio(REPLAY),
      cpuFirst: cpuOver(FIRST),
    };
  } finally {
    await load?.stop();
    await Promise.all(servers.map((s) => s.stop()));
    log(`  cleaned up ${await cleanUpPrefix(prefix)} keys`);
  }
}
