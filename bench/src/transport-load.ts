import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { LoadResult } from './load';
import type { TransportName } from './transport-wiring';

/** What `fixtures/transport-load-worker` connects to: plain data, since it crosses a process boundary. */
export interface TransportWorkerConfig {
  transport: TransportName;
  redisUrl: string;
  /** Messages in flight: each sent once the reply to the one before it came. */
  inFlight: number;
  /** By name: the server's pattern (queue, subject, topic, channel) and its port (gRPC, GraphQL). */
  targets: Record<string, { channel: string; port: number }>;
}

/** One run of the worker against one of its targets. */
export interface TransportRun {
  id: number;
  target: string;
  /** A new key per message (this prefix and a counter), or one key throughout. */
  key: { perMessage: string } | { fixed: string };
  warmupS: number;
  durationS: number;
}

/** A connected worker process: `run` measures one run, `stop` ends it. */
export interface TransportLoad {
  run(
    run: Omit<TransportRun, 'id'>,
    hooks: { onMeasuring: () => void; onDone: () => void },
  ): Promise<LoadResult & { firstFailure?: string }>;
  stop(): Promise<void>;
}

/** Start the worker pinned to `cpus` (a `taskset -c` list) when given; resolves once it is connected to every target. */
export async function startTransportLoad(config: TransportWorkerConfig, cpus?: string): Promise<TransportLoad> {
  const args = [join(__dirname, 'fixtures', 'transport-load-worker.js'), JSON.stringify(config)];
  const proc = cpus ? spawn('taskset', ['-c', cpus, process.execPath, ...args]) : spawn(process.execPath, args);
  let stderr = '';
  proc.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
  const lines = createInterface({ input: proc.stdout });
  const exited = new Promise<never>((_, reject) =>
    proc.once('close', (code) => reject(new Error(`transport load worker (${config.transport}) exited ${code}: ${stderr.trim()}`))),
  );
  exited.catch(() => undefined);
  let onLine: (line: string) => void = () => undefined;
  lines.on('line', (line) => onLine(line));
  await Promise.race([new Promise<void>((resolve) => (onLine = (line) => line === 'READY' && resolve())), exited]);
  let next = 0;
  return {
    async run(run, { onMeasuring, onDone }) {
      const id = ++next;
      const result = new Promise<LoadResult & { firstFailure?: string }>((resolve) => {
        onLine = (line) => {
          if (line === `MEASURING ${id}`) onMeasuring();
          else if (line.startsWith(`RESULT ${id} `)) {
            onDone();
            resolve(JSON.parse(line.slice(`RESULT ${id} `.length)) as LoadResult);
          }
        };
      });
      proc.stdin.write(`${JSON.stringify({ ...run, id })}\n`);
      return Promise.race([result, exited]);
    },
    async stop() {
      if (proc.exitCode !== null) return;
      const closed = new Promise<void>((resolve) => proc.once('close', () => resolve()));
      proc.stdin.end();
      setTimeout(() => proc.kill('SIGKILL'), 5000).unref();
      await closed;
    },
  };
}
