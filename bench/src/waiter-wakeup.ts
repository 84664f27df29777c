import { IdempotencyCoordinator } from '@idempotency-chain/idempotency';
import { RedisStore } from '@idempotency-chain/idempotency/redis';
import { randomUUID } from 'node:crypto';
import { waiterChart } from './chart-specs';
import { profileInProcess, profileMarkdown, summarizeProfile } from './profile';
import type { SectionResult, Target } from './report';
import { connect, deleteByPrefix, pingLatencies, RUN_PREFIX } from './redis-tools';
import { SETTINGS } from './settings';
import { figure, fmt, percentile, sleep } from './stats';

const TARGET_P99_MS = 5;
const POLL_MS = 50;
const OPERATION = 'bench.wait';

type Mode = 'signal' | 'poll';
const WAKE: Record<Mode, string> = { signal: 'pub/sub signal', poll: `${POLL_MS} ms polling loop` };

/**
 * (3) Waiter wake-up: W duplicates of one request wait while the first
 * executes. The clock starts when the winner's action returns its value and
 * stops when each duplicate's `run()` resolves with the replayed result, so
 * the span holds the completion script, the pub/sub message and each
 * waiter's re-claim that reads the result. The baseline is the same
 * duplicates re-claiming every 50 ms instead of being woken.
 *
 * Winner and waiters use separate stores and connections, as two replicas would.
 */
export async function waiterWakeup(log: (line: string) => void): Promise<SectionResult> {
  const prefix = `${RUN_PREFIX}wait:`;
  const [winnerClient, waiterClient] = await Promise.all([connect(), connect()]);
  const winnerStore = new RedisStore({ client: winnerClient, prefix });
  const waiterStore = new RedisStore({ client: waiterClient, prefix });
  const winner = new IdempotencyCoordinator({ service: 'bench', store: winnerStore });
  const waiters = new IdempotencyCoordinator({ service: 'bench', store: waiterStore });
  const request = (key: string) => ({ operation: OPERATION, key, fingerprint: 'fp' });

  const signalWaiter = async (key: string): Promise<number> => {
    const result = await waiters.run(request(key), async () => {
      throw new Error('a waiter executed: the winner still held the key');
    });
    const at = performance.now();
    if (!result.replayed || !result.waited) throw new Error('a waiter was answered without waiting');
    return at;
  };
  const pollingWaiter = async (key: string): Promise<number> => {
    const recordKey = waiters.recordKey(OPERATION, '', key);
    for (;;) {
      const claim = await waiterStore.claim({ recordKey, fingerprint: 'fp', owner: randomUUID(), leaseMs: 10_000 });
      if (claim.status === 'completed') return performance.now();
      if (claim.status === 'claimed') throw new Error('a polling waiter claimed the key: the winner did not hold it');
      await sleep(POLL_MS);
    }
  };

  /** One trial; resolves with each waiter's delay after the winner's completion (ms). */
  const trial = async (count: number, mode: Mode): Promise<number[]> => {
    const key = randomUUID();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let executing = false;
    let completedAt = 0;
    const first = winner.run(request(key), async () => {
      executing = true;
      await gate;
      completedAt = performance.now();
      return { charged: true };
    });
    while (!executing) await sleep(1);
    const resolved = Array.from({ length: count }, () => (mode === 'signal' ? signalWaiter(key) : pollingWaiter(key)));
    // Long enough for every waiter to be subscribed; a random phase against the poll interval.
    await sleep(30 + Math.random() * POLL_MS);
    release();
    const [times] = await Promise.all([Promise.all(resolved), first]);
    return times.map((at) => at - completedAt);
  };

  try {
    for (let i = 0; i < 5; i++) await trial(10, 'signal'); // warm-up: scripts, subscriber connection, JIT
    const perRun = new Map<string, Array<{ p50: number; p99: number; max: number }>>();
    const pingRuns: Array<{ p50: number; p99: number }> = [];
    for (let run = 0; run < SETTINGS.runs; run++) {
      const pings: number[] = [];
      for (const count of SETTINGS.waiterCounts) {
        for (const mode of ['signal', 'poll'] as const) {
          const samples: number[] = [];
          for (let t = 0; t < (SETTINGS.waiterTrials[count] ?? 5); t++) {
            samples.push(...(await trial(count, mode)));
            // The floor in the same moments: a wake-up needs at least two round trips and a message.
            pings.push(...(await pingLatencies(waiterClient, 3)));
          }
          const stats = { p50: percentile(samples, 50), p99: percentile(samples, 99), max: Math.max(...samples) };
          const name = `${count}:${mode}`;
          perRun.set(name, [...(perRun.get(name) ?? []), stats]);
          log(
            `  run ${run + 1}/${SETTINGS.runs} ${String(count).padStart(3)} waiters, ${mode.padEnd(6)}: p50 ${fmt.ms(stats.p50)}, p99 ${fmt.ms(stats.p99)} (${samples.length} samples)`,
          );
        }
      }
      pingRuns.push({ p50: percentile(pings, 50), p99: percentile(pings, 99) });
      log(
        `  run ${run + 1}/${SETTINGS.runs} Redis PING between trials: p50 ${fmt.ms(pingRuns[run]!.p50)}, p99 ${fmt.ms(pingRuns[run]!.p99)} (${pings.length} samples)`,
      );
    }
    const med = (count: number, mode: Mode, pick: 'p50' | 'p99') => figure((perRun.get(`${count}:${mode}`) ?? []).map((s) => s[pick]));
    const rows = SETTINGS.waiterCounts.map((count) => [
      String(count),
      fmt.ms(med(count, 'signal', 'p50').median),
      fmt.ms(med(count, 'signal', 'p99').median),
      fmt.ms(med(count, 'poll', 'p50').median),
      fmt.ms(med(count, 'poll', 'p99').median),
      fmt.ratio(med(count, 'poll', 'p50').median / med(count, 'signal', 'p50').median),
    ]);
    const targets: Target[] = SETTINGS.waiterCounts.map((count) => {
      const p99 = med(count, 'signal', 'p99');
      return {
        what: `p99 wake-up <= ${TARGET_P99_MS} ms with ${count} waiter${count === 1 ? '' : 's'}`,
        met: p99.median <= TARGET_P99_MS,
        detail: `${fmt.ms(p99.median)} (runs: ${p99.runs.map((v, i) => `${v.toFixed(2)} ms with Redis PING p99 ${pingRuns[i]?.p99.toFixed(2)} ms`).join('; ')})`,
      };
    });
    const profiles: SectionResult['profiles'] = [];
    const worst = targets.findLastIndex((t) => !t.met);
    if (worst >= 0) {
      const count = SETTINGS.waiterCounts[worst] as number;
      log(`  target MISSED at ${count} waiters -> profiling this process over 10 trials`);
      const cpu = process.cpuUsage();
      const file = await profileInProcess(async () => {
        for (let t = 0; t < 10; t++) await trial(count, 'signal');
      });
      const used = process.cpuUsage(cpu);
      const cpuMs = (used.user + used.system) / 1000;
      profiles.push({
        title: `Where the time goes: CPU profile of the benchmark process (winner + ${count} waiters), 10 trials`,
        markdown: profileMarkdown(
          [{ label: `${count} waiters`, summary: summarizeProfile(file, 10 * count, cpuMs) }],
          `${count} waiters`,
          'waiter',
        ),
      });
    }
    const first = SETTINGS.waiterCounts[0] as number;
    const last = SETTINGS.waiterCounts.at(-1) as number;
    return {
      id: 'waiters',
      headline:
        `**Waiters**: a duplicate waiting on a running request gets its answer ${fmt.ms(med(first, 'signal', 'p50').median)} (p50) / ${fmt.ms(med(first, 'signal', 'p99').median)} (p99) after the first one completes, ` +
        `${fmt.ms(med(last, 'signal', 'p50').median)} / ${fmt.ms(med(last, 'signal', 'p99').median)} with ${last} waiters; polling every ${POLL_MS} ms: ${fmt.ms(med(first, 'poll', 'p50').median)} / ${fmt.ms(med(first, 'poll', 'p99').median)}.`,
      title: "3. Waiter wake-up: completion to each duplicate's answer, pub/sub vs 50 ms polling",
      method:
        'One winner (its own `RedisStore` and connection) holds a key; W duplicates on a second store, as on another replica, call `IdempotencyCoordinator.run` with the same key and wait. ' +
        "Clock: from the winner's action returning to each duplicate's `run()` resolving with the replayed result (completion script + PUBLISH + the waiter's re-claim). " +
        `Baseline: the same duplicates re-claiming every ${POLL_MS} ms. Trials per run: ${SETTINGS.waiterCounts.map((c) => `${SETTINGS.waiterTrials[c]} x ${c}`).join(', ')}; ` +
        `percentiles over each run's samples, median of ${SETTINGS.runs} runs.`,
      tables: [
        {
          headers: ['waiters', 'pub/sub p50', 'pub/sub p99', `${POLL_MS} ms poll p50`, `${POLL_MS} ms poll p99`, 'poll / pub/sub (p50)'],
          rows,
        },
      ],
      targets,
      notes: [
        `Floor, in the same runs: a Redis PING from the waiters' connection, timed between trials, took ${fmt.ms(figure(pingRuns.map((r) => r.p50)).median)} p50 / ` +
          `${fmt.ms(figure(pingRuns.map((r) => r.p99)).median)} p99 (runs: ${pingRuns.map((r) => r.p99.toFixed(2)).join(', ')} ms). A wake-up is at least two round trips ` +
          "(the completion script, then the re-claim that reads the result) plus the pub/sub message, so its p99 cannot go below about twice the round trip's.",
        `With W waiters the wake-up is one message, but W re-claims, one Redis command and one socket write each, queued on one connection: the W-th waiter waits for all before it.`,
      ],
      profiles,
      charts: [
        waiterChart(
          SETTINGS.waiterCounts.flatMap((waiters) =>
            (['signal', 'poll'] as const).flatMap((mode) =>
              (['p50', 'p99'] as const).map((percentile) => ({
                waiters,
                wake: WAKE[mode],
                percentile,
                ms: med(waiters, mode, percentile).median,
              })),
            ),
          ),
          `one winner, W duplicates on another connection; medians of ${SETTINGS.runs} runs`,
        ),
      ],
    };
  } finally {
    await Promise.all([winnerStore.close(), waiterStore.close()]);
    const deleted = await deleteByPrefix(winnerClient, prefix);
    log(`  cleaned up ${deleted} keys`);
    await Promise.all([winnerClient.quit(), waiterClient.quit()]);
  }
}
