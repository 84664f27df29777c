import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { sleep } from './stats';

/** Every child this run started and has not yet seen exit. */
const live = new Set<ChildProcess>();

/** Where the profiles of a run are written (kept for a closer look, ignored by git). */
export const PROFILE_DIR = join(__dirname, '..', 'profiles');
/** The preload that lets a child be profiled on demand (see `fixtures/cpu-profiler.preload.ts`). */
const PROFILER_PRELOAD = join(__dirname, 'fixtures', 'cpu-profiler.preload.js');

/** A Node child process of the benchmark. */
export interface NodeChild {
  name: string;
  process: ChildProcess;
  /**
   * CPU time (user + system) the child has used so far, in ms, as the kernel
   * counts it: unlike throughput, it does not move when other processes
   * compete for the cores. NaN where /proc is missing.
   */
  cpuMs(): number;
  /** The last lines of its stderr, for error messages. */
  stderr(): string;
  /** Start the CPU profiler in the child; resolves once it runs. */
  startProfile(): Promise<void>;
  /** Stop it and resolve with the path of the `.cpuprofile`. */
  stopProfile(): Promise<string>;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves on exit. */
  stop(graceMs?: number): Promise<void>;
}

export interface SpawnOptions {
  env?: Record<string, string>;
  /** Resolve once a stdout line matches; otherwise resolve once `ready()` does. */
  readyLine?: RegExp;
  ready?: () => Promise<boolean>;
  timeoutMs?: number;
  /** Pin the child to these cores (a `taskset -c` list), away from the load generator's. */
  cpus?: string;
}

/** Start `node <script>` with the profiler preload; resolve with it and the matched ready line. */
export async function spawnNode(
  name: string,
  script: string,
  options: SpawnOptions = {},
): Promise<{ child: NodeChild; match?: RegExpMatchArray }> {
  mkdirSync(PROFILE_DIR, { recursive: true });
  const profileFile = join(PROFILE_DIR, `${name}-${process.pid}-${Date.now()}.cpuprofile`);
  const argv = [process.execPath, '-r', PROFILER_PRELOAD, script];
  // taskset execs node in place: the pid, and so its CPU time in /proc, is the server's.
  const [command, ...args] = options.cpus ? ['taskset', '-c', options.cpus, ...argv] : argv;
  const proc = spawn(command!, args, {
    env: { ...process.env, ...options.env, BENCH_PROFILE_FILE: profileFile },
    // The IPC channel closes when this process dies, however it dies: the child watches it.
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  live.add(proc);
  proc.once('exit', () => live.delete(proc));
  let stderr = '';
  let profiles = 0;
  proc.stderr!.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
  const lines = createInterface({ input: proc.stdout! });
  const exited = new Promise<never>((_, reject) =>
    proc.once('exit', (code, signal) => reject(new Error(`${name} exited (${signal ?? code}): ${stderr.trim()}`))),
  );
  exited.catch(() => undefined);

  const child: NodeChild = {
    name,
    process: proc,
    stderr: () => stderr,
    cpuMs: () => cpuMsOf(proc.pid),
    async startProfile() {
      rmSync(profileFile, { force: true });
      proc.send('bench:profile');
      await until(() => existsSync(`${profileFile}.started`), 5000, `${name}'s profiler to start`);
    },
    async stopProfile() {
      proc.send('bench:profile');
      await until(() => existsSync(profileFile), 15000, `${name}'s profile`);
      rmSync(`${profileFile}.started`, { force: true });
      // The next profile of this child writes the same file: keep this one under its own name.
      const kept = profileFile.replace(/\.cpuprofile$/, `-${++profiles}.cpuprofile`);
      renameSync(profileFile, kept);
      return kept;
    },
    stop: (graceMs = 5000) => stopProcess(proc, graceMs),
  };

  const timeout = sleep(options.timeoutMs ?? 20_000).then(() => {
    throw new Error(`${name} did not become ready: ${stderr.trim()}`);
  });
  try {
    const ready = options.readyLine
      ? new Promise<RegExpMatchArray>((resolve) =>
          lines.on('line', (line) => {
            const match = line.match(options.readyLine!);
            if (match) resolve(match);
          }),
        )
      : pollReady(options.ready!);
    const match = await Promise.race([ready, exited, timeout]);
    lines.on('line', () => undefined); // keep draining stdout
    return { child, match: match ?? undefined };
  } catch (error) {
    await child.stop(1000);
    throw error;
  }
}

let clockTicks: number | undefined;

/** utime + stime of `pid` from /proc, in ms. */
function cpuMsOf(pid: number | undefined): number {
  try {
    clockTicks ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    // Fields after the command name (which may hold spaces): state is field 3, utime 14, stime 15.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) / clockTicks) * 1000;
  } catch {
    return Number.NaN;
  }
}

async function pollReady(ready: () => Promise<boolean>): Promise<undefined> {
  for (;;) {
    if (await ready().catch(() => false)) return undefined;
    await sleep(50);
  }
}

async function until(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await sleep(20);
  }
}

function stopProcess(proc: ChildProcess, graceMs: number): Promise<void> {
  return new Promise<void>((resolve) => {
    if (proc.exitCode !== null || proc.signalCode !== null) return resolve();
    proc.once('exit', () => resolve());
    proc.kill('SIGTERM');
    setTimeout(() => proc.kill('SIGKILL'), graceMs).unref();
  });
}

/** Stop every child still running (graceful first). */
export async function stopAllChildren(): Promise<void> {
  await Promise.all([...live].map((proc) => stopProcess(proc, 3000)));
}

/** Last resort, from an `exit` handler: no waiting possible. */
export function killAllChildrenNow(): void {
  for (const proc of live) proc.kill('SIGKILL');
}

/** Resolve when nothing listens on `port` (127.0.0.1), or reject naming it. */
export async function assertPortFree(port: number): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const server = createServer();
    server.once('error', () => reject(new Error(`port ${port} is in use; the benchmark needs it free`)));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve()));
  });
}

/** A loopback port nothing listens on now, for a child told which port to take. */
export function freePort(): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no free port'))));
    });
  });
}

/** A `redis-server` of this run's own: nothing else writes to it, so `INFO memory` is the run's alone. */
export interface PrivateRedisServer {
  url: string;
  /** Stop it (SIGTERM, then SIGKILL); resolves on exit. Nothing persists. */
  stop(): Promise<void>;
}

/** Start `redis-server` on a free loopback port, without persistence, with `args`; resolves once it answers PING. */
export async function startRedisServer(name: string, args: string[] = []): Promise<PrivateRedisServer> {
  const port = await freePort();
  const proc = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  live.add(proc);
  proc.once('exit', () => live.delete(proc));
  let output = '';
  for (const stream of [proc.stdout, proc.stderr])
    stream?.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-2000)));
  const lines = createInterface({ input: proc.stdout });
  try {
    await Promise.race([
      new Promise<void>((resolve) => lines.on('line', (line) => line.includes('Ready to accept connections') && resolve())),
      new Promise<never>((_, reject) => proc.once('exit', () => reject(new Error(`${name}: redis-server exited: ${output.trim()}`)))),
      sleep(10_000).then(() => Promise.reject(new Error(`${name}: redis-server did not start: ${output.trim()}`))),
    ]);
  } catch (error) {
    await stopProcess(proc, 1000);
    throw error;
  }
  return { url: `redis://127.0.0.1:${port}`, stop: () => stopProcess(proc, 3000) };
}
