import { RedisStore } from '@idempotency-chain/idempotency/redis';
import type { SectionResult } from './report';
import { commandCalls, connect, countCommands, deleteByPrefix, redisBenchmarkArgs, redisBenchmarkSet, RUN_PREFIX } from './redis-tools';
import { SETTINGS } from './settings';
import { figure, fmt } from './stats';

/** What an HTTP execution stores, roughly: status and a small JSON body. */
const RESULT = JSON.stringify({ statusCode: 201, body: { orderId: 'order-bench', amountCents: 500, status: 'accepted', n: 1 } });
const LEASE_MS = 10_000;
const RETENTION_MS = 60_000;
const SAMPLE = 1000;

/**
 * (2) The store alone: claim + complete cycles per second at several
 * concurrencies, next to `redis-benchmark` SET on the same Redis in the same
 * run, and the round trips each cycle and each replay costs.
 */
export async function storeCycles(log: (line: string) => void): Promise<SectionResult> {
  const prefix = `${RUN_PREFIX}store:`;
  const client = await connect();
  const counter = countCommands(client);
  const store = new RedisStore({ client, prefix });
  let n = 0;
  const nextKey = () => `k${(n++).toString(36)}`;
  const cycle = async () => {
    const recordKey = nextKey();
    const owner = recordKey;
    const claim = await store.claim({ recordKey, fingerprint: 'fp', owner, leaseMs: LEASE_MS });
    if (claim.status !== 'claimed') throw new Error(`fresh key not claimed: ${claim.status}`);
    if (!(await store.complete(recordKey, owner, RESULT, RETENTION_MS))) throw new Error('completion refused');
  };
  const replayKey = nextKey();
  const replay = async () => {
    const claim = await store.claim({ recordKey: replayKey, fingerprint: 'fp', owner: 'replayer', leaseMs: LEASE_MS });
    if (claim.status !== 'completed') throw new Error(`replay found ${claim.status}`);
  };
  const rbKey = `${prefix}redis-benchmark`;
  try {
    // Warm-up: loads the scripts (the first EVALSHA of each falls back to EVAL once).
    for (let i = 0; i < 200; i++) await cycle();
    await store.claim({ recordKey: replayKey, fingerprint: 'fp', owner: 'first', leaseMs: LEASE_MS });
    await store.complete(replayKey, 'first', RESULT, RETENTION_MS);

    // Round trips, counted on the client and cross-checked server-side.
    const serverBefore = await commandCalls(client);
    counter.reset();
    for (let i = 0; i < SAMPLE; i++) await cycle();
    const perCycle = counter.total() / SAMPLE;
    const cycleCommands = counter.byName();
    const serverBetween = await commandCalls(client);
    counter.reset();
    for (let i = 0; i < SAMPLE; i++) await replay();
    const perReplay = counter.total() / SAMPLE;
    const replayCommands = counter.byName();
    const serverAfter = await commandCalls(client);
    const scripts = (calls: Record<string, number>) => (calls.evalsha ?? 0) + (calls.eval ?? 0);
    const serverPerCycle = (scripts(serverBetween) - scripts(serverBefore)) / SAMPLE;
    const serverPerReplay = (scripts(serverAfter) - scripts(serverBetween)) / SAMPLE;
    log(
      `  round trips: ${perCycle.toFixed(2)} per cycle (${JSON.stringify(cycleCommands)}), ${perReplay.toFixed(2)} per replay (${JSON.stringify(replayCommands)})`,
    );

    const rows: string[][] = [];
    for (const concurrency of SETTINGS.storeConcurrency) {
      const cycles: number[] = [];
      const replays: number[] = [];
      const sets: number[] = [];
      for (let run = 0; run < SETTINGS.runs; run++) {
        cycles.push(await rate(cycle, concurrency, SETTINGS.storeRunS));
        replays.push(await rate(replay, concurrency, SETTINGS.storeRunS / 2));
        sets.push(await redisBenchmarkSet(concurrency, concurrency === 1 ? 15_000 : 40_000, rbKey));
        const i = cycles.length - 1;
        log(
          `  c=${String(concurrency).padEnd(3)} run ${run + 1}/${SETTINGS.runs}: ${fmt.int(cycles[i]!)} cycles/s, ${fmt.int(replays[i]!)} replays/s, redis-benchmark SET ${fmt.int(sets[i]!)}/s`,
        );
      }
      const c = figure(cycles);
      const r = figure(replays);
      const s = figure(sets);
      const cycleRatio = figure(cycles.map((x, i) => x / (sets[i] as number)));
      const replayRatio = figure(replays.map((x, i) => x / (sets[i] as number)));
      rows.push([
        String(concurrency),
        fmt.spread(c, fmt.int),
        fmt.spread(r, fmt.int),
        fmt.spread(s, fmt.int),
        fmt.ratio(cycleRatio.median),
        fmt.ratio(replayRatio.median),
        fmt.ratio(cycleRatio.median * perCycle),
      ]);
    }
    const targets = [
      {
        what: 'Redis round trips per claim+complete cycle = 2',
        met: perCycle === 2,
        detail: `${perCycle.toFixed(2)} (${fmtNames(cycleCommands)})`,
      },
      { what: 'Redis round trips per replay = 1', met: perReplay === 1, detail: `${perReplay.toFixed(2)} (${fmtNames(replayCommands)})` },
    ];
    const at16 = rows.find((row) => row[0] === '16');
    return {
      id: 'store',
      headline: `**The store alone**: ${at16?.[1]?.split(' ')[0] ?? 'n/a'} claim+complete cycles/s with 16 concurrent callers, ${at16?.[4] ?? 'n/a'} of \`redis-benchmark\` SET/s on the same Redis (a cycle is 2 round trips, a replay 1, as counted).`,
      title: '2. The store alone: RedisStore claim+complete cycles vs redis-benchmark SET',
      method:
        `In-process \`RedisStore\` on one ioredis connection; N concurrent loops of claim (fresh key) + complete (a ${RESULT.length}-byte result) ` +
        `for ${SETTINGS.storeRunS} s per run, replays (claim of a completed key) for ${SETTINGS.storeRunS / 2} s, then \`redis-benchmark ${redisBenchmarkArgs(16, 40_000, '<prefix>:redis-benchmark').join(' ')}\` ` +
        `(with -c N) on the same Redis, in the same run; ${SETTINGS.runs} runs each, medians (min-max). Ratios are run by run. ` +
        `Round trips are counted by a hook on the client's \`sendCommand\` over ${SAMPLE} sequential cycles and ${SAMPLE} replays.`,
      tables: [
        {
          headers: ['concurrency', 'cycles/s', 'replays/s', 'redis-benchmark SET/s', 'cycles / SET', 'replays / SET', 'round trips / SET'],
          rows,
        },
      ],
      targets,
      notes: [
        `Client hook: ${perCycle.toFixed(2)} commands per cycle (${fmtNames(cycleCommands)}), ${perReplay.toFixed(2)} per replay (${fmtNames(replayCommands)}). ` +
          `Server cross-check, INFO commandstats evalsha+eval calls over the same operations: ${serverPerCycle.toFixed(2)} per cycle, ${serverPerReplay.toFixed(2)} per replay (server-wide, so other clients of the shared Redis can only add to them).`,
        'A cycle is two Lua scripts (claim: GET, TIME, GET, SET, PEXPIREAT; complete: GET, TIME, SET, PEXPIREAT, and PUBLISH when a waiter listens) against one SET for redis-benchmark, so ~0.5x of SET/s is the ceiling for cycles; "round trips / SET" is the same ratio per round trip.',
      ],
      profiles: [],
      charts: [],
    };
  } finally {
    await store.close();
    const deleted = await deleteByPrefix(client, prefix);
    log(`  cleaned up ${deleted} keys`);
    await client.quit();
  }
}

function fmtNames(names: Record<string, number>): string {
  return Object.entries(names)
    .map(([name, count]) => `${name} x${count}`)
    .join(', ');
}

/** Operations per second of `operation` run by `concurrency` loops for `seconds`. */
export async function rate(operation: () => Promise<void>, concurrency: number, seconds: number): Promise<number> {
  const started = performance.now();
  const deadline = started + seconds * 1000;
  let done = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < deadline) {
        await operation();
        done++;
      }
    }),
  );
  return done / ((performance.now() - started) / 1000);
}
