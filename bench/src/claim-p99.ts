import { RedisStore } from '@idempotency-chain/idempotency/redis';
import { createHash } from 'node:crypto';
import { connect, deleteByPrefix, RUN_PREFIX } from './redis-tools';
import type { SectionResult } from './report';
import { SETTINGS } from './settings';
import { figure, fmt, percentile } from './stats';
import { DAY_MS, STORED_ANSWER, STORED_ANSWER_BYTES } from './stored-records';

/** The store case's headline concurrency, and ten times it. */
const BASE = 16;
const LOADED = BASE * 10;
const LEASE_MS = 10_000;
/** Interleaved rounds, each running both concurrencies once. */
const ROUNDS = SETTINGS.quick ? 1 : 4;
const RUN_S = SETTINGS.quick ? 0.5 : 1.5;

const hex = (text: string) => createHash('sha256').update(text).digest('hex');

interface Run {
  /** Claim latencies, ms. */
  p50: number;
  p99: number;
  cyclesPerS: number;
}

/**
 * (10) Claim latency at ten times the store case's concurrency: claim+complete
 * cycles of fresh keys by 16 and by 160 concurrent loops on one
 * `RedisStore`, interleaved, the claim of each cycle timed.
 */
export async function claimP99(log: (line: string) => void): Promise<SectionResult> {
  const prefix = `${RUN_PREFIX}claim-p99:`;
  const client = await connect();
  const store = new RedisStore({ client, prefix });
  let n = 0;
  const measure = async (concurrency: number, seconds: number): Promise<Run> => {
    const latencies: number[] = [];
    const started = performance.now();
    const deadline = started + seconds * 1000;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (performance.now() < deadline) {
          const owner = `claim-p99.${(n++).toString(36)}`;
          const recordKey = hex(owner);
          const sent = performance.now();
          const claim = await store.claim({ recordKey, fingerprint: hex(recordKey), owner, leaseMs: LEASE_MS });
          latencies.push(performance.now() - sent);
          if (claim.status !== 'claimed') throw new Error(`a fresh key was not claimed: ${claim.status}`);
          if (!(await store.complete(recordKey, owner, STORED_ANSWER, DAY_MS))) throw new Error('a completion was refused');
        }
      }),
    );
    return {
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      cyclesPerS: latencies.length / ((performance.now() - started) / 1000),
    };
  };
  try {
    await measure(LOADED, 0.3); // warm-up: scripts loaded, JIT
    const runs = new Map<number, Run[]>([
      [BASE, []],
      [LOADED, []],
    ]);
    for (let round = 0; round < ROUNDS; round++) {
      for (const concurrency of round % 2 === 0 ? [BASE, LOADED] : [LOADED, BASE]) {
        const run = await measure(concurrency, RUN_S);
        runs.get(concurrency)!.push(run);
        log(
          `  round ${round + 1}/${ROUNDS} c=${String(concurrency).padEnd(3)} claim p50 ${fmt.ms(run.p50)}, p99 ${fmt.ms(run.p99)}, ${fmt.int(run.cyclesPerS)} cycles/s`,
        );
      }
    }
    const [base, loaded] = [runs.get(BASE)!, runs.get(LOADED)!];
    const ratio = figure(loaded.map((run, i) => run.p99 / base[i]!.p99));
    const throughput = figure(loaded.map((run, i) => run.cyclesPerS / base[i]!.cyclesPerS));
    const row = (concurrency: number, list: Run[]) => [
      String(concurrency),
      fmt.spread(figure(list.map((r) => r.p50)), (x) => fmt.ms(x)),
      fmt.spread(figure(list.map((r) => r.p99)), (x) => fmt.ms(x)),
      fmt.spread(figure(list.map((r) => r.cyclesPerS)), fmt.int),
    ];
    const limit = LOADED / BASE;
    return {
      id: 'claim-p99-10x',
      headline:
        `**Claim p99 at 10x the load**: ${fmt.ms(figure(loaded.map((r) => r.p99)).median)} with ${LOADED} concurrent callers against ${fmt.ms(figure(base.map((r) => r.p99)).median)} with ${BASE}, ` +
        `${fmt.ratio(ratio.median)} for ${limit}x the callers.`,
      title: `10. Claim latency at ten times the load: ${LOADED} concurrent callers against ${BASE}`,
      method:
        `In-process \`RedisStore\` on one ioredis connection to the shared Redis, as in section 2: N concurrent loops of claim (a fresh key) + complete ` +
        `(the ${STORED_ANSWER_BYTES}-byte answer of section 8), N = ${BASE} (section 2's headline concurrency) and ${LOADED}; each claim timed from the call to its answer. ` +
        `${ROUNDS} rounds of ${RUN_S} s per concurrency, alternating which goes first; percentiles per run, the ratio run by run, then medians (min-max).`,
      tables: [{ headers: ['concurrency', 'claim p50', 'claim p99', 'cycles/s'], rows: [row(BASE, base), row(LOADED, loaded)] }],
      targets: [
        {
          what: `claim p99 at ${LOADED} callers <= ${limit}x its p99 at ${BASE} (no more than proportional to the load)`,
          met: ratio.median <= limit,
          detail: `${fmt.ratio(ratio.median)} (runs: ${ratio.runs.map(fmt.ratio).join(', ')}); throughput ${fmt.ratio(throughput.median)} of the base`,
        },
      ],
      notes: [
        `Why proportional: one connection to one Redis serves commands one at a time, so once it is saturated the ${LOADED} callers queue and, by Little's law, ` +
          'a claim waits about as long as the work queued ahead of it: ten times the callers, ten times the wait, at the same throughput. A p99 growing faster than the load would mean the ' +
          'store serves less under load than without it (contention, a script holding the server, collapsing queues); slower growth means the base concurrency had not saturated it.',
      ],
      profiles: [],
      charts: [],
    };
  } finally {
    await store.close();
    log(`  cleaned up ${await deleteByPrefix(client, prefix)} keys`);
    await client.quit();
  }
}
