import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createConnection, createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

/** The `redis-server` binary the lab starts: `REDIS_SERVER` or the one on the PATH. */
export const REDIS_SERVER = process.env.REDIS_SERVER || 'redis-server';

/** Why a private Redis cannot be started here, or undefined when it can. */
export function privateRedisUnavailable(): string | undefined {
  const probe = spawnSync(REDIS_SERVER, ['--version'], { encoding: 'utf8', timeout: 5000 });
  if (probe.error) return `${REDIS_SERVER} is not installed (${(probe.error as NodeJS.ErrnoException).code ?? probe.error.message})`;
  if (probe.status !== 0) return `${REDIS_SERVER} --version failed (${probe.status})`;
  return undefined;
}

/** A port nobody listens on right now, from the kernel. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** True when a Redis answers PING on `port` within `timeoutMs`. */
export function pings(port: number, timeoutMs = 500): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    let answer = '';
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      answer += chunk.toString();
      if (answer.includes('\r\n')) done(answer.startsWith('+PONG'));
    });
  });
}

/**
 * A throwaway Redis of the scenario's own, so it can be stopped and started
 * again without touching the run's Redis: no persistence, loopback only,
 * always on the same port (the services reconnect to the address they know).
 */
export class PrivateRedis {
  private child?: ChildProcess;
  private exit?: Promise<void>;

  private constructor(readonly port: number) {}

  /** Start one on a free port; resolves once it answers PING. */
  static async start(): Promise<PrivateRedis> {
    const redis = new PrivateRedis(await freePort());
    await redis.start();
    return redis;
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
    const child = spawn(REDIS_SERVER, ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
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
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await this.exit;
    this.child = undefined;
  }
}
