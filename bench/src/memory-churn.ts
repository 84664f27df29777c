import { MemoryStore } from '@idempotency-chain/idempotency';
import { setImmediate as yieldToTimers } from 'node:timers/promises';
import type { SectionResult, Target } from './report';
import { SETTINGS } from './settings';
import { figure, fmt, sleep } from './stats';

const SWEEP_MS = 250;
/** "Back to baseline": what a full GC leaves above the heap before the churn. */
const HEAP_TOLERANCE_BYTES = 2 * 1024 * 1024;
const RESULT = JSON.stringify({ statusCode: 201, body: { orderId: 'order-bench', amountCents: 500, status: 'accepted' } });

interface ChurnRun {
  keysPerSecond: number;
  peakSize: number;
  peakHeapAbove: number;
  sizeAfter: number;
  heapAfterAbove: number;
  emptiedAfterMs: number;
}

/**
 * (5) Memory under churn: distinct keys claimed and completed through the
 * in-memory store with a short retention, as fast as this process can; the
 * store must hold only what is still retained, and after the last expiry
 * both its size and the heap must be back where they started.
 */
export async function memoryChurn(log: (line: string) => void): Promise<SectionResult> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('memory-churn needs node --expose-gc (npm run bench passes it)');
  const heap = () => {
    gc();
    gc();
    return process.memoryUsage().heapUsed;
  };
  const runs: ChurnRun[] = [];
  for (let run = 0; run < SETTINGS.runs; run++) {
    const baseline = heap();
    const store = new MemoryStore({ sweepIntervalMs: SWEEP_MS });
    let peakSize = 0;
    let peakHeap = 0;
    const started = performance.now();
    for (let i = 0; i < SETTINGS.churnKeys; i++) {
      // Shaped like the coordinator's store keys (64 hex digits), without paying for a hash here.
      const recordKey = `${run.toString(16)}${i.toString(16).padStart(63, '0')}`;
      await store.claim({ recordKey, fingerprint: recordKey, owner: 'o', leaseMs: 10_000 });
      await store.complete(recordKey, 'o', RESULT, SETTINGS.churnRetentionMs);
      if (i % 20_000 === 0) {
        peakSize = Math.max(peakSize, store.size);
        peakHeap = Math.max(peakHeap, process.memoryUsage().heapUsed);
        await yieldToTimers(); // let the sweeper run, as it would between requests
      }
    }
    const insertedAt = performance.now();
    const keysPerSecond = SETTINGS.churnKeys / ((insertedAt - started) / 1000);
    peakSize = Math.max(peakSize, store.size);
    peakHeap = Math.max(peakHeap, process.memoryUsage().heapUsed);
    while (store.size > 0 && performance.now() - insertedAt < SETTINGS.churnRetentionMs + 10 * SWEEP_MS) await sleep(20);
    const emptiedAfterMs = performance.now() - insertedAt;
    const sizeAfter = store.size;
    const heapAfter = heap();
    await store.close();
    const result = {
      keysPerSecond,
      peakSize,
      peakHeapAbove: peakHeap - baseline,
      sizeAfter,
      heapAfterAbove: heapAfter - baseline,
      emptiedAfterMs,
    };
    runs.push(result);
    log(
      `  run ${run + 1}/${SETTINGS.runs}: ${fmt.int(SETTINGS.churnKeys)} keys at ${fmt.int(keysPerSecond)}/s; peak ${fmt.int(peakSize)} records, ` +
        `heap +${fmt.mb(result.peakHeapAbove)}; after expiry: ${sizeAfter} records, heap ${signedMb(result.heapAfterAbove)} vs baseline (${fmt.mb(baseline)})`,
    );
  }
  const med = (pick: (r: ChurnRun) => number) => figure(runs.map(pick)).median;
  const sizeAfter = Math.max(...runs.map((r) => r.sizeAfter));
  const heapAfter = med((r) => r.heapAfterAbove);
  const targets: Target[] = [
    {
      what: 'store size back to 0 after expiry',
      met: sizeAfter === 0,
      detail: `${sizeAfter} records left (largest of ${runs.length} runs)`,
    },
    {
      what: `heap back to baseline after expiry (within ${fmt.mb(HEAP_TOLERANCE_BYTES)}, after a full GC)`,
      met: heapAfter <= HEAP_TOLERANCE_BYTES,
      detail: `${signedMb(heapAfter)} vs baseline (runs: ${runs.map((r) => signedMb(r.heapAfterAbove)).join(', ')})`,
    },
  ];
  return {
    id: 'memory',
    headline:
      `**Memory**: ${fmt.int(SETTINGS.churnKeys)} keys with ${SETTINGS.churnRetentionMs / 1000} s retention through the in-memory store peak at ${fmt.int(med((r) => r.peakSize))} records (heap +${fmt.mb(med((r) => r.peakHeapAbove))}, garbage included) ` +
      `and leave ${sizeAfter} records and ${signedMb(heapAfter)} of heap after expiry.`,
    title: '5. Memory under churn: distinct keys through the in-memory store, 1 s retention',
    method:
      `${fmt.int(SETTINGS.churnKeys)} distinct keys (64 hex digits, like the coordinator's SHA-256 store keys) claimed and completed through \`MemoryStore({ sweepIntervalMs: ${SWEEP_MS} })\` ` +
      `with ${SETTINGS.churnRetentionMs} ms retention and a ${RESULT.length}-byte result, in this process (\`node --expose-gc\`), yielding to timers every 20,000 keys; ` +
      `then wait for the sweeper to empty the store and measure the heap after \`gc()\`. Medians of ${SETTINGS.runs} runs.`,
    tables: [
      {
        headers: [
          'keys',
          'keys/s',
          'peak records',
          'peak heap above baseline (garbage included)',
          'records after expiry',
          'heap after expiry vs baseline',
          'emptied after last insert',
        ],
        rows: [
          [
            fmt.int(SETTINGS.churnKeys),
            fmt.int(med((r) => r.keysPerSecond)),
            fmt.int(med((r) => r.peakSize)),
            fmt.mb(med((r) => r.peakHeapAbove)),
            String(sizeAfter),
            signedMb(heapAfter),
            fmt.ms(
              med((r) => r.emptiedAfterMs),
              0,
            ),
          ],
        ],
      },
    ],
    targets,
    notes: [
      'The peak is what retention bounds: the records of the last retention window (plus up to one sweep interval), not every key ever seen.',
    ],
    profiles: [],
    charts: [],
  };
}

const signedMb = (bytes: number): string => `${bytes >= 0 ? '+' : '-'}${fmt.mb(Math.abs(bytes))}`;
