import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { LoadResult } from './load';

/** One load run for `fixtures/load-worker`: plain data, since it crosses a process boundary. */
export interface LoadJob {
  url: string;
  path?: string;
  headers?: Record<string, string>;
  connections: number;
  warmupS: number;
  durationS: number;
  /**
   * Through `setupRequest`, called per request: a new key from a counter
   * (`perRequest`: its prefix) or the same key each time (`sameEachRequest`);
   * autocannon's `[<id>]` (`generated`); or one fixed key in a request built once.
   */
  key: { perRequest: string } | { sameEachRequest: string } | { generated: true } | { fixed: string };
}

/**
 * Run `job` in a load generator process of its own, pinned to `cpus`
 * (a `taskset -c` list) when given. `onMeasuring` is called when the
 * warm-up ends and the measured run starts, `onDone` right as the result
 * arrives: where the caller reads the server's CPU time.
 */
export function loadInProcessOfItsOwn(
  job: LoadJob,
  { cpus, onMeasuring, onDone }: { cpus?: string; onMeasuring?: () => void; onDone?: () => void } = {},
): Promise<LoadResult> {
  const script = join(__dirname, 'fixtures', 'load-worker.js');
  const args = [script, JSON.stringify(job)];
  const proc = cpus ? spawn('taskset', ['-c', cpus, process.execPath, ...args]) : spawn(process.execPath, args);
  let stderr = '';
  proc.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
  return new Promise<LoadResult>((resolve, reject) => {
    let result: LoadResult | undefined;
    createInterface({ input: proc.stdout }).on('line', (line) => {
      if (line === 'MEASURING') onMeasuring?.();
      else if (line.startsWith('RESULT ')) {
        onDone?.();
        result = JSON.parse(line.slice('RESULT '.length)) as LoadResult;
      }
    });
    proc.once('error', reject);
    proc.once('close', (code) =>
      result && code === 0 ? resolve(result) : reject(new Error(`load worker exited ${code}: ${stderr.trim()}`)),
    );
  });
}
