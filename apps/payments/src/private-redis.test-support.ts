import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';

/** Bound on anything a loaded machine may be slow at: a start, a stop, a pause. */
const BOUND_MS = 10_000;

/**
 * A throwaway `redis-server` of the test's own, without persistence, that a
 * test may stop, start again on the same port, or pause: never the shared
 * Redis at `REDIS_URL`.
 */
export class PrivateRedis {
  private child?: ChildProcess;
  private exited?: Promise<unknown>;

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

  /** (Re)start on the same port, where its clients reconnect; resolves once it answers PING. */
  async start(): Promise<void> {
    const binary = process.env.REDIS_SERVER ?? 'redis-server';
    const child = spawn(binary, ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
      cwd: tmpdir(), // a stray file never lands in the repository
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    this.child = child;
    this.exited = once(child, 'exit').catch(() => undefined);
    process.once('exit', () => child.kill('SIGKILL')); // never outlives the test process
    const deadline = Date.now() + BOUND_MS;
    while (!(await pings(this.port))) {
      if (child.exitCode !== null || Date.now() > deadline) {
        await this.stop();
        throw new Error(`${binary} did not start on port ${this.port}: ${stderr.trim() || 'no PING answer'}`);
      }
      await sleep(50);
    }
  }

  /** Kill it (SIGKILL: an outage, not a shutdown) and wait for the exit. */
  async stop(): Promise<void> {
    const child = this.child;
    if (!child) return;
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGCONT'); // a paused server dies at once too
      child.kill('SIGKILL');
    }
    await this.exited;
    this.child = undefined;
  }

  /**
   * Freeze it (SIGSTOP): connections stay open and commands are accepted by
   * the kernel, but nothing answers until `resume`. Resolves once the
   * process is stopped, so a command sent after it cannot be answered first.
   */
  async pause(): Promise<void> {
    const child = this.running();
    child.kill('SIGSTOP');
    const deadline = Date.now() + BOUND_MS;
    while (processState(child.pid!) !== 'T') {
      if (Date.now() > deadline) throw new Error(`redis-server ${child.pid} did not stop within ${BOUND_MS} ms`);
      await sleep(10);
    }
  }

  /** Let a paused server run again: it answers what it was sent meanwhile, in order. */
  resume(): void {
    this.running().kill('SIGCONT');
  }

  private running(): ChildProcess {
    if (!this.child || this.child.exitCode !== null) throw new Error('the private Redis is not running');
    return this.child;
  }
}

/** The state letter of `/proc/<pid>/stat` (`T`: stopped). */
function processState(pid: number): string | undefined {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).charAt(0);
}

/** One raw PING, so readiness does not depend on any client's reconnection. */
function pings(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    const finish = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => finish(false));
    socket.once('error', () => finish(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (chunk) => finish(chunk.toString().startsWith('+PONG')));
  });
}

/** A loopback port nothing listens on (bound, then released). */
export async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}
