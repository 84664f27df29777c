import { IdempotencyCoordinator, MemoryStore, type IdempotencyStore } from '@idempotency-chain/idempotency';
import { RedisStore } from '@idempotency-chain/idempotency/redis';
import { randomBytes } from 'node:crypto';
import type { SectionResult } from './report';
import { connect, deleteByPrefix, RUN_PREFIX } from './redis-tools';
import { SETTINGS } from './settings';
import { figure, fmt } from './stats';

const OPERATION = 'bench.charge';
const CONCURRENCY = 16;
/** A typical JSON answer of a payments API, about 1 KiB serialised. */
const ANSWER = {
  statusCode: 201,
  headers: { 'content-type': 'application/json; charset=utf-8', location: '/charges/ch_3f9a2c' },
  body: {
    chargeId: 'ch_3f9a2c',
    orderId: 'order-bench',
    amountCents: 500,
    currency: 'EUR',
    status: 'captured',
    card: { brand: 'visa', last4: '4242', holder: 'Jane Q. Customer' },
    billing: { line1: '1 Example Street', city: 'Springfield', postcode: '12345', country: 'DE' },
    lines: Array.from({ length: 8 }, (_, i) => ({ sku: `sku-${i}`, quantity: 1, unitCents: 50 + i, description: 'an item of the order' })),
  },
};
const ANSWER_BYTES = Buffer.byteLength(JSON.stringify(ANSWER));

type Variant = 'first' | 'replay';
interface Case {
  store: string;
  variant: Variant;
  encrypted: boolean;
  /** One operation: a first execution of a fresh key, or a replay of a completed one. */
  operation: () => Promise<unknown>;
}

/**
 * (7) What encrypting stored answers costs: first executions (claim, action,
 * complete: one encryption) and replays (claim of a completed record: one
 * decryption), each with and without `encryption`, through the coordinator
 * on an in-memory store (where the cipher's share is largest) and on Redis.
 * The replay cache is off, so every replay reads and decrypts the stored
 * answer, as the first replay of each key on each replica does.
 */
export async function encryptionCost(log: (line: string) => void): Promise<SectionResult> {
  const prefix = `${RUN_PREFIX}encryption:`;
  const client = await connect();
  const memory = new MemoryStore();
  const redis = new RedisStore({ client, prefix });
  const keys = [{ id: 'k2', key: randomBytes(32) }];
  let n = 0;
  const cases: Case[] = [];
  for (const [name, store] of [
    ['memory', memory],
    ['Redis', redis],
  ] as Array<[string, IdempotencyStore]>) {
    for (const encrypted of [false, true]) {
      const coordinator = new IdempotencyCoordinator({
        service: 'bench',
        store,
        replayCache: false,
        defaults: { retentionMs: 60_000 },
        ...(encrypted && { encryption: { keys } }),
      });
      const request = (key: string) => ({ operation: OPERATION, key, fingerprint: 'fp' });
      const replayKey = `replay-${name}-${encrypted}`;
      await coordinator.run(request(replayKey), async () => ANSWER);
      cases.push(
        {
          store: name,
          variant: 'first',
          encrypted,
          operation: () => coordinator.run(request(`k${(n++).toString(36)}`), async () => ANSWER),
        },
        {
          store: name,
          variant: 'replay',
          encrypted,
          operation: async () => {
            if (!(await coordinator.run(request(replayKey), async () => ANSWER)).replayed) throw new Error('a replay executed');
          },
        },
      );
    }
  }
  const label = (c: Case) => `${c.store} ${c.variant}${c.encrypted ? ' encrypted' : ''}`;
  try {
    for (const c of cases) await measure(c.operation, 0.3); // warm-up: JIT, scripts loaded
    const figures = new Map<Case, Array<{ rate: number; cpuUs: number }>>(cases.map((c) => [c, []]));
    for (let run = 0; run < SETTINGS.runs; run++) {
      // Rotated each run, so neither side of a pair always runs first on a noisy machine.
      const order = cases.map((_, i) => cases[(i + run) % cases.length] as Case);
      for (const c of order) {
        const result = await measure(c.operation, SETTINGS.storeRunS);
        figures.get(c)!.push(result);
        log(`  run ${run + 1}/${SETTINGS.runs} ${label(c).padEnd(26)} ${fmt.int(result.rate)} ops/s, ${result.cpuUs.toFixed(1)} µs CPU/op`);
      }
    }
    const rows: string[][] = [];
    const headline: string[] = [];
    for (const c of cases.filter((x) => x.encrypted)) {
      const plain = cases.find((x) => x.store === c.store && x.variant === c.variant && !x.encrypted) as Case;
      const [withIt, without] = [figures.get(c)!, figures.get(plain)!];
      const ratio = figure(withIt.map((r, i) => r.rate / without[i]!.rate));
      const cpu = figure(withIt.map((r, i) => r.cpuUs - without[i]!.cpuUs));
      rows.push([
        c.store,
        c.variant === 'first' ? 'first execution' : 'replay',
        fmt.spread(figure(without.map((r) => r.rate)), fmt.int),
        fmt.spread(figure(withIt.map((r) => r.rate)), fmt.int),
        fmt.ratio(ratio.median),
        `${fmt.signed(cpu.median, 1)} µs`,
      ]);
      headline.push(`${c.store} ${c.variant === 'first' ? 'first executions' : 'replays'} ${fmt.ratio(ratio.median)}`);
    }
    return {
      id: 'encryption',
      headline: `**Encryption at rest**: encrypted against unencrypted throughput, ${headline.join(', ')} (AES-256-GCM, a ${ANSWER_BYTES}-byte answer).`,
      title: '7. Encryption at rest: first executions and replays with and without encryption',
      method:
        `In-process \`IdempotencyCoordinator.run()\` with ${CONCURRENCY} concurrent loops, on a \`MemoryStore\` and on a \`RedisStore\` (one ioredis connection), ` +
        `each with and without \`encryption\` (one AES-256-GCM key), answering a ${ANSWER_BYTES}-byte JSON answer; the replay cache off, so every replay decrypts. ` +
        `A first execution is a fresh key (claim, action, complete), a replay a completed key (one claim). ` +
        `${SETTINGS.storeRunS} s per case per run, ${SETTINGS.runs} runs in rotated order; ratios and CPU differences are run by run, then their median. CPU is this process's user+system time per operation.`,
      tables: [
        {
          headers: [
            'store',
            'operation',
            'unencrypted ops/s',
            'encrypted ops/s',
            'encrypted / unencrypted',
            'CPU per op, encrypted - unencrypted',
          ],
          rows,
        },
      ],
      targets: [],
      notes: [
        'An encrypted answer is stored as `enc2:<key id>:` and the base64 of IV (12 bytes), ciphertext and tag (16 bytes): ' +
          `${Math.ceil((12 + ANSWER_BYTES + 16) / 3) * 4 + 'enc2:k2:'.length} characters for this ${ANSWER_BYTES}-byte answer.`,
      ],
      profiles: [],
      charts: [],
    };
  } finally {
    await redis.close();
    await memory.close();
    const deleted = await deleteByPrefix(client, prefix);
    log(`  cleaned up ${deleted} keys`);
    await client.quit();
  }
}

/** Operations per second of `operation` over `CONCURRENCY` loops for `seconds`, and this process's CPU time per operation. */
async function measure(operation: () => Promise<unknown>, seconds: number): Promise<{ rate: number; cpuUs: number }> {
  const cpu = process.cpuUsage();
  const started = performance.now();
  const deadline = started + seconds * 1000;
  let done = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < deadline) {
        await operation();
        done++;
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  return { rate: done / elapsed, cpuUs: (used.user + used.system) / done };
}
