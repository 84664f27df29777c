/**
 * `npm run bench:shapes -w @idempotency-chain/bench`: why two ways of
 * measuring ours against @node-idempotency/nestjs disagree. It starts from
 * the shape of sections 1 and 6 (the load generator in the benchmark's own
 * process, a key made per request by `setupRequest`, the servers' command
 * hooks, one shared scope, 2 s runs) and changes one difference at a time
 * towards the shape of a user's own measurement (a one-route app per
 * library as its README wires it, autocannon as a process of its own on the
 * other core, 8 s runs), measuring bare, ours and the peer at every step,
 * interleaved, and printing the ratios per step. Printed only.
 */
import { startChargeServer } from './deployed-servers';
import { startServer } from './endpoint-servers';
import { freshKeys, load, type LoadResult } from './load';
import { loadInProcessOfItsOwn, type LoadJob } from './load-process';
import type { NodeChild } from './processes';
import { killAllChildrenNow } from './processes';
import { cleanUpPrefix, RUN_PREFIX } from './redis-tools';
import { fmt, median } from './stats';
import { loadavg } from 'node:os';

/** One way of measuring: every field is one of the differences between the two shapes. */
interface Shape {
  step: string;
  /** `endpoint`: `fixtures/endpoint-server` (sections 1 and 6); `charge`: `fixtures/charge-server`, the app a user deploys. */
  app: 'endpoint' | 'charge';
  /** Command-counting hooks in the servers (endpoint app only). */
  hooks: boolean;
  /** Where autocannon runs: in this process, in a process of its own, or in one pinned to the other core than the servers'. */
  loader: 'in-process' | 'own-process' | 'pinned';
  /** `setupRequest`: a key function called per request (the request rebuilt each time, a replay's fixed key too); `autocannon`: `[<id>]` and a prebuilt replay. */
  keys: 'setupRequest' | 'autocannon' | 'literal';
  /** The charge app's callers send credentials; without them ours refuses every request (500 scope-unresolved), which autocannon counts as answered. */
  caller: boolean;
  warmupS: number;
  rewarmS: number;
  durationS: number;
  rounds: number;
}

const SERVER_CPU = '0';
const LOAD_CPU = '1';
const CONNECTIONS = 32;

const base: Shape = {
  step: '',
  app: 'endpoint',
  hooks: true,
  loader: 'in-process',
  keys: 'setupRequest',
  caller: true,
  warmupS: 1,
  rewarmS: 0.5,
  durationS: 2,
  rounds: 5,
};
const STEPS: Shape[] = [];
const step = (name: string, change: Partial<Shape>) => STEPS.push({ ...(STEPS.at(-1) ?? base), ...change, step: name });
step('0. bench/ as it is (sections 1 and 6)', {});
step('1. load generator in a process of its own', { loader: 'own-process' });
step('2. ... pinned: servers on core 0, load on core 1', { loader: 'pinned' });
step("3. keys by autocannon's [<id>], replay request built once", { keys: 'autocannon' });
step('4. no command-counting hooks in the servers', { hooks: false });
step('5. the app a user deploys (README wiring, per-caller scope, charge handler)', { app: 'charge' });
step('6. 8 s runs, 2 rounds (the outside harness)', { warmupS: 2, rewarmS: 1, durationS: 8, rounds: 2 });
// What would flatter ours in a harness that counts every answer, as autocannon's req/s does.
step('7. what if: no credentials (ours refuses every request, non-2xx counted)', { caller: false });
step("8. what if: '[<id>]' sent without --idReplacement (one key: first executions are replays)", { caller: true, keys: 'literal' });

const VARIANTS = ['bare', 'ours first', 'peer first', 'ours replay', 'peer replay'] as const;
type VariantName = (typeof VARIANTS)[number];

interface Run {
  rps: number;
  cpuUs: number;
}

async function measureShape(shape: Shape, log: (line: string) => void): Promise<Map<VariantName, Run[]>> {
  const prefix = `${RUN_PREFIX}shapes:`;
  const cpus = shape.loader === 'pinned' ? SERVER_CPU : undefined;
  const start = (library: 'bare' | 'ours' | 'node-idempotency') =>
    shape.app === 'charge'
      ? startChargeServer(library, { prefix, cpus })
      : startServer(library, { prefix, countCommands: shape.hooks, cpus });
  const [bare, ours, peer] = await Promise.all([start('bare'), start('ours'), start('node-idempotency')]);
  const path = shape.app === 'charge' ? '/charges' : '/orders';
  const headers = shape.app === 'charge' && shape.caller ? { authorization: 'Bearer caller-7' } : undefined;
  const stamp = Date.now().toString(36);
  const servers: Record<VariantName, { url: string; child: NodeChild; replay?: string }> = {
    bare,
    'ours first': ours,
    'peer first': peer,
    'ours replay': { ...ours, replay: `or${stamp}` },
    'peer replay': { ...peer, replay: `pr${stamp}` },
  };
  try {
    for (const server of Object.values(servers)) {
      if (!server.replay) continue;
      const seeded = await fetch(`${server.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': server.replay, ...headers },
        body: JSON.stringify({ orderId: 'order-bench', amountCents: 500 }),
      });
      if (seeded.status !== 201 && shape.caller) throw new Error(`seeding ${server.replay}: ${seeded.status}`);
    }
    const runs = new Map<VariantName, Run[]>(VARIANTS.map((v) => [v, []]));
    let n = 0;
    for (let round = 0; round < shape.rounds; round++) {
      const order = VARIANTS.map((_, i) => VARIANTS[(i + round) % VARIANTS.length]!);
      for (const name of order) {
        const server = servers[name];
        const warmupS = round === 0 ? shape.warmupS : shape.rewarmS;
        const keyPrefix = `${name.slice(0, 1)}${stamp}-${n++}-`;
        let cpuBefore = Number.NaN;
        let cpuAfter = Number.NaN;
        let result: LoadResult;
        if (shape.loader === 'in-process') {
          const key = server.replay ? () => server.replay! : freshKeys(keyPrefix);
          const keySource =
            shape.keys === 'setupRequest'
              ? key
              : server.replay
                ? { fixed: server.replay }
                : shape.keys === 'literal'
                  ? { fixed: '[<id>]' }
                  : { generated: true as const };
          await load({ url: server.url, path, headers, connections: CONNECTIONS, durationS: warmupS, key: keySource });
          cpuBefore = server.child.cpuMs();
          result = await load({ url: server.url, path, headers, connections: CONNECTIONS, durationS: shape.durationS, key: keySource });
          cpuAfter = server.child.cpuMs();
        } else {
          const key: LoadJob['key'] =
            shape.keys === 'setupRequest'
              ? server.replay
                ? { sameEachRequest: server.replay }
                : { perRequest: keyPrefix }
              : server.replay
                ? { fixed: server.replay }
                : shape.keys === 'literal'
                  ? { fixed: `[<id>]${stamp}` }
                  : { generated: true };
          result = await loadInProcessOfItsOwn(
            { url: server.url, path, headers, connections: CONNECTIONS, warmupS, durationS: shape.durationS, key },
            {
              cpus: shape.loader === 'pinned' ? LOAD_CPU : undefined,
              onMeasuring: () => (cpuBefore = server.child.cpuMs()),
              onDone: () => (cpuAfter = server.child.cpuMs()),
            },
          );
        }
        const what = shape.caller ? undefined : JSON.stringify(result.statusCodes);
        if (result.failures > 0 && shape.caller)
          throw new Error(`${name}: ${result.failures} failures ${JSON.stringify(result.statusCodes)}`);
        const run = { rps: result.rps, cpuUs: ((cpuAfter - cpuBefore) * 1000) / result.total };
        runs.get(name)!.push(run);
        log(
          `    round ${round + 1} ${name.padEnd(12)} ${fmt.int(run.rps).padStart(7)} req/s  ${fmt.int(run.cpuUs)} µs/req${what ? `  ${what}` : ''}`,
        );
      }
    }
    return runs;
  } finally {
    await Promise.all([bare, ours, peer].map((s) => s.child.stop()));
    await cleanUpPrefix(prefix);
  }
}

async function main(): Promise<void> {
  const log = (line: string) => process.stdout.write(`${line}\n`);
  const only = process.env.BENCH_STEPS?.split(',').map(Number);
  const rows: string[] = [];
  for (const [i, shape] of STEPS.entries()) {
    if (only && !only.includes(i)) continue;
    const load1 = loadavg()[0]!;
    log(`${shape.step} (load average ${load1.toFixed(2)})`);
    const runs = await measureShape(shape, log);
    const ratio = (a: VariantName, b: VariantName) => {
      const rs = runs.get(a)!.map((r, k) => r.rps / runs.get(b)![k]!.rps);
      return `${fmt.ratio(median(rs))} (${fmt.ratio(Math.min(...rs))}-${fmt.ratio(Math.max(...rs))})`;
    };
    const cpuOver = (a: VariantName) => fmt.signed(median(runs.get(a)!.map((r, k) => r.cpuUs - runs.get('bare')![k]!.cpuUs)));
    const row = [
      shape.step,
      ratio('ours first', 'peer first'),
      ratio('ours replay', 'peer replay'),
      ratio('ours first', 'bare'),
      ratio('ours replay', 'bare'),
      `${cpuOver('ours first')} / ${cpuOver('peer first')} µs`,
      `${cpuOver('ours replay')} / ${cpuOver('peer replay')} µs`,
      `${fmt.int(median(runs.get('bare')!.map((r) => r.rps)))}`,
      `${load1.toFixed(2)}-${loadavg()[0]!.toFixed(2)}`,
    ];
    rows.push(`| ${row.join(' | ')} |`);
    log(rows.at(-1)!);
  }
  log(
    [
      '',
      '| step | ours/peer first | ours/peer replay | ours/bare first | ours/bare replay | CPU over bare, first: ours / peer | CPU over bare, replay: ours / peer | bare req/s | load avg (1 min) start-end |',
      '|---|---|---|---|---|---|---|---|---|',
      ...rows,
    ].join('\n'),
  );
}

process.on('exit', killAllChildrenNow);
main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`shapes: ${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  },
);
