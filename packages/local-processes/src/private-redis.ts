import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createConnection } from 'node:net';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { track } from './children';
import { freePort, portTaken } from './ports';

/** The `redis-server` binary the runner starts: `REDIS_SERVER` or the one on the PATH. */
export function redisServerBinary(): string {
  return process.env.REDIS_SERVER || 'redis-server';
}

/** Why a private Redis cannot be started here, or undefined when it can. */
export function privateRedisUnavailable(): string | undefined {
  const binary = redisServerBinary();
  const probe = spawnSync(binary, ['--version'], { encoding: 'utf8', timeout: 5000 });
  if (probe.error) return `${binary} is not installed (${(probe.error as NodeJS.ErrnoException).code ?? probe.error.message})`;
  if (probe.status !== 0) return `${binary} --version failed (${probe.status})`;
  return undefined;
}

/**
 * Send one command to the Redis on `port` over a connection of its own and
 * resolve with the first line of its reply (`+PONG`, `+OK`, `-ERR ...`);
 * undefined when nothing answers within `timeoutMs`. A command that blocks
 * the server (`DEBUG SLEEP`) is answered once it is over.
 */
export function redisCommand(port: number, args: string[], timeoutMs = 500): Promise<string | undefined> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    let answer = '';
    const done = (reply: string | undefined) => {
      socket.destroy();
      resolve(reply);
    };
    socket.setTimeout(timeoutMs, () => done(undefined));
    socket.once('error', () => done(undefined));
    socket.once('connect', () =>
      socket.write(`*${args.length}\r\n${args.map((arg) => `$${Buffer.byteLength(arg)}\r\n${arg}\r\n`).join('')}`),
    );
    socket.on('data', (chunk) => {
      answer += chunk.toString();
      const end = answer.indexOf('\r\n');
      if (end >= 0) done(answer.slice(0, end));
    });
  });
}

/** True when a Redis answers PING on `port` within `timeoutMs`. */
export async function pings(port: number, timeoutMs = 500): Promise<boolean> {
  return (await redisCommand(port, ['PING'], timeoutMs)) === '+PONG';
}

/** How a private Redis keeps what it is told. */
export interface PrivateRedisOptions {
  /**
   * Keep every write in an append-only file, fsynced before the write is
   * acknowledged (`appendfsync always`), in a temporary folder of its own:
   * killed and started again, it has lost nothing it acknowledged, as a
   * payments team must run the Redis of its records and ledger. Also allows
   * `DEBUG SLEEP` from loopback, to pause it. Default off: nothing persists.
   */
  durable?: boolean;
}

/**
 * A throwaway `redis-server` of the run's own: the run's store when no
 * `REDIS_URL` is given, or a scenario's, so it can be stopped and started
 * again without touching any other Redis. No persistence unless `durable`,
 * loopback only, always on the same port (the services reconnect to the
 * address they know), and killed with the runner if the runner dies first.
 */
export class PrivateRedis {
  private child?: ChildProcess;
  private exit?: Promise<void>;
  /** The append-only file's folder, when durable. */
  private readonly dir?: string;

  private constructor(
    readonly port: number,
    options: PrivateRedisOptions,
  ) {
    if (options.durable) this.dir = mkdtempSync(join(tmpdir(), 'private-redis-'));
  }

  /**
   * Start one on a free port; resolves once it answers PING. Another process
   * may take the port between the pick and the bind: then a new port.
   */
  static async start(options: PrivateRedisOptions = {}): Promise<PrivateRedis> {
    for (let tries = 1; ; tries += 1) {
      const redis = new PrivateRedis(await freePort(), options);
      try {
        await redis.start();
        return redis;
      } catch (error) {
        await redis.dispose();
        if (tries >= 3 || !portTaken((error as Error).message)) throw error;
      }
    }
  }

  /** The server's process id, while it runs. */
  get pid(): number | undefined {
    return this.running ? this.child?.pid : undefined;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  get running(): boolean {
    return Boolean(this.child && this.child.exitCode === null && this.child.signalCode === null);
  }

  /** (Re)start on the same port; resolves once it answers PING (bounded). */
  async start(timeoutMs = 10_000): Promise<void> {
    if (this.running) return;
    const persistence = this.dir
      ? ['--appendonly', 'yes', '--appendfsync', 'always', '--dir', this.dir, '--enable-debug-command', 'local']
      : ['--appendonly', 'no'];
    // Run in a temp folder: a stray file could never land in the repository.
    const child = track(
      spawn(redisServerBinary(), ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', ...persistence], {
        cwd: this.dir ?? tmpdir(),
        stdio: ['ignore', 'ignore', 'pipe'],
      }),
    );
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    this.child = child;
    this.exit = new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.once('error', () => resolve()); // never spawned: nothing to wait for
    });
    const failed = new Promise<never>((_, reject) => {
      child.once('error', reject);
      child.once('exit', (code, signal) => reject(new Error(`redis-server on ${this.port} exited (${signal ?? code}): ${stderr.trim()}`)));
    });
    failed.catch(() => undefined);
    const deadline = Date.now() + timeoutMs;
    const ready = (async () => {
      while (!(await pings(this.port))) {
        if (this.child !== child) return; // it exited: `failed` tells why
        if (Date.now() > deadline) throw new Error(`redis-server on ${this.port} did not answer PING within ${timeoutMs} ms`);
        await sleep(25);
      }
    })();
    try {
      await Promise.race([ready, failed]);
    } catch (error) {
      await this.stop();
      throw error;
    }
  }

  /** Kill it at once (SIGKILL: an outage, not a shutdown) and wait for the exit. */
  async stop(): Promise<void> {
    const child = this.child;
    if (!child) return;
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGCONT'); // a paused server is let run, so it exits at once too
      child.kill('SIGKILL');
    }
    await this.exit;
    this.child = undefined;
  }

  /**
   * Freeze it (SIGSTOP): its connections stay open and the kernel accepts
   * commands, but nothing answers until `resume` - a Redis that hangs, not
   * one that is down. Resolves once the process is stopped, so a command
   * sent afterwards cannot be answered first.
   */
  async pause(timeoutMs = 10_000): Promise<void> {
    const child = this.child;
    if (!this.running || !child?.pid) throw new Error(`redis-server on ${this.port} is not running`);
    child.kill('SIGSTOP');
    const deadline = Date.now() + timeoutMs;
    while (processState(child.pid) !== 'T') {
      if (Date.now() > deadline) throw new Error(`redis-server ${child.pid} did not stop within ${timeoutMs} ms`);
      await sleep(10);
    }
  }

  /** Let a paused server run again: it answers what it was sent meanwhile, in order. */
  resume(): void {
    this.child?.kill('SIGCONT');
  }

  /** Stop it and delete its append-only file: it cannot be started again. */
  async dispose(): Promise<void> {
    await this.stop();
    if (this.dir) rmSync(this.dir, { recursive: true, force: true });
  }
}

/** The state letter in `/proc/<pid>/stat` (`T`: stopped). */
function processState(pid: number): string {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).charAt(0);
}
