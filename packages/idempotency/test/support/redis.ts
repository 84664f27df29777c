import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StartedRedisContainer } from '@testcontainers/redis';
import { Redis } from 'ioredis';

/**
 * Where the Redis tests find a server: `REDIS_URL` when set, otherwise a
 * container started with testcontainers (once per test file). The shared
 * server is never stopped by a test; outage tests use `startPrivateRedis`.
 */
let container: Promise<StartedRedisContainer> | undefined;

export async function redisUrl(): Promise<string> {
  const fromEnv = process.env.REDIS_URL;
  if (fromEnv) return fromEnv;
  container ??= startContainer();
  return (await container).getConnectionUrl();
}

/** Stop the container `redisUrl` started, if it started one. */
export async function stopRedisContainer(): Promise<void> {
  const started = container;
  container = undefined;
  if (started) await (await started.catch(() => undefined))?.stop();
}

async function startContainer(): Promise<StartedRedisContainer> {
  try {
    const { RedisContainer } = await import('@testcontainers/redis');
    return await new RedisContainer('redis:7-alpine').start();
  } catch (cause) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    throw new Error(
      `The Redis tests need a Redis server. REDIS_URL is not set and testcontainers could not start one (${reason}). ` +
        'Set REDIS_URL, e.g. REDIS_URL=redis://127.0.0.1:6379, to run them against an existing server.',
      { cause },
    );
  }
}

/** A throwaway redis-server child process, for tests that stop the store. */
export interface PrivateRedis {
  url: string;
  /** Kill the server (SIGKILL, like a crash) and wait for it to exit. Idempotent. */
  stop(): Promise<void>;
  /**
   * Kill it (SIGKILL) and start it again on the same port: its clients
   * reconnect to the address they know. A durable server comes back with
   * every write it acknowledged.
   */
  restart(): Promise<void>;
  /** Send the server `signal`: `SIGSTOP` pauses it (its connections stay open, unanswered), `SIGCONT` resumes it. */
  signal(signal: NodeJS.Signals): void;
}

/** How a private Redis keeps what it is told. */
export interface PrivateRedisOptions {
  /**
   * Keep every write in an append-only file fsynced before the write is
   * acknowledged (`appendfsync always`), in a temporary folder of its own,
   * so a crash and a restart lose nothing. Default off: nothing persists.
   */
  durable?: boolean;
  /**
   * Run it in cluster mode (`cluster-enabled`, announcing 127.0.0.1), its
   * node file in a temporary folder of its own. It holds no slot until
   * told (`CLUSTER ADDSLOTSRANGE 0 16383`).
   */
  cluster?: boolean;
}

/** Start `redis-server` on a free port and wait until it answers PING. */
export async function startPrivateRedis(options: PrivateRedisOptions = {}): Promise<PrivateRedis> {
  const port = await freePort();
  const dir = options.durable || options.cluster ? mkdtempSync(join(tmpdir(), 'idem-redis-')) : undefined;
  const args = [
    ...(options.durable ? ['--appendonly', 'yes', '--appendfsync', 'always'] : ['--appendonly', 'no']),
    ...(options.cluster ? ['--cluster-enabled', 'yes', '--cluster-announce-ip', '127.0.0.1'] : []),
  ];
  let launched = await launch(port, dir, args);
  let stopped = false;
  return {
    url: `redis://127.0.0.1:${port}`,
    stop: async () => {
      stopped = true;
      await launched.stop();
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
    restart: async () => {
      if (stopped) throw new Error('This private Redis was stopped for good');
      await launched.stop();
      launched = await launch(port, dir, args);
    },
    signal: (signal) => launched.signal(signal),
  };
}

/** One node of a private Redis Cluster, with a connection of its own to it (its default user). */
export interface PrivateClusterNode {
  server: PrivateRedis;
  port: number;
  admin: Redis;
}

/** The slot ranges of a three-shard cluster, one master each. */
export const CLUSTER_THIRDS = [
  ['0', '5460'],
  ['5461', '10922'],
  ['10923', '16383'],
] as const;

/**
 * Start three private redis-servers in cluster mode, one master each for
 * a third of the slots, no replicas, serving with a shard down
 * (`cluster-require-full-coverage no`, a node marked failed after a
 * second): resolves once every node sees all three and the cluster ok.
 */
export async function startPrivateCluster(): Promise<PrivateClusterNode[]> {
  const nodes: PrivateClusterNode[] = [];
  for (const range of CLUSTER_THIRDS) {
    const server = await startPrivateRedis({ cluster: true });
    const admin = new Redis(server.url, { lazyConnect: true });
    admin.on('error', () => undefined);
    nodes.push({ server, port: Number(new URL(server.url).port), admin });
    await admin.connect();
    await admin.call('CONFIG', 'SET', 'cluster-require-full-coverage', 'no');
    await admin.call('CONFIG', 'SET', 'cluster-node-timeout', '1000');
    await admin.call('CLUSTER', 'ADDSLOTSRANGE', ...range);
  }
  for (const node of nodes.slice(1)) await nodes[0]?.admin.call('CLUSTER', 'MEET', '127.0.0.1', String(node.port));
  const settled = async (node: PrivateClusterNode) =>
    /cluster_state:ok/.test(String(await node.admin.call('CLUSTER', 'INFO'))) &&
    String(await node.admin.call('CLUSTER', 'NODES'))
      .trim()
      .split('\n').length === nodes.length;
  const deadline = Date.now() + 20_000;
  for (const node of nodes) {
    while (!(await settled(node))) {
      if (Date.now() > deadline) throw new Error(`The private cluster did not settle on port ${node.port}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  return nodes;
}

/** Stop every node of a private cluster. */
export async function stopPrivateCluster(nodes: PrivateClusterNode[]): Promise<void> {
  for (const node of nodes) {
    node.admin.disconnect();
    await node.server.stop();
  }
}

/**
 * Start a Redis Sentinel on a free port that watches the Redis on
 * `masterPort` as `name` (logging in to it with `masterPassword`, when
 * given), its config in a temporary folder of its own (a Sentinel writes
 * to it). Its own login is open: set one with ACL SETUSER.
 */
export async function startPrivateSentinel(masterPort: number, name: string, masterPassword?: string): Promise<PrivateRedis> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'idem-sentinel-'));
  const config = join(dir, 'sentinel.conf');
  const auth = masterPassword ? `sentinel auth-pass ${name} ${masterPassword}\n` : '';
  writeFileSync(config, `sentinel monitor ${name} 127.0.0.1 ${masterPort} 1\n${auth}`);
  const launched = await launch(port, dir, ['--sentinel'], config);
  return {
    url: `redis://127.0.0.1:${port}`,
    stop: async () => {
      await launched.stop();
      rmSync(dir, { recursive: true, force: true });
    },
    restart: () => Promise.reject(new Error('A private Sentinel is not restarted')),
    signal: (signal) => launched.signal(signal),
  };
}

/** A running `redis-server`: what kills it, and what sends it a signal. */
interface Launched {
  stop(): Promise<void>;
  signal(signal: NodeJS.Signals): void;
}

/**
 * Run one `redis-server` on `port` with `args` (its files in `dir`, when
 * given, its config file first when given); resolves with what kills it.
 */
async function launch(port: number, dir: string | undefined, args: string[], config?: string): Promise<Launched> {
  const binary = process.env.REDIS_SERVER_BIN ?? '/usr/bin/redis-server';
  const files = dir ? ['--dir', dir] : [];
  const child = spawn(
    binary,
    [...(config ? [config] : []), '--port', String(port), '--bind', '127.0.0.1', '--save', '', ...files, ...args],
    {
      cwd: dir ?? tmpdir(),
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = once(child, 'exit').catch(() => undefined);
  const running = () => child.exitCode === null && child.signalCode === null;
  // Never leave a server behind when the test process ends.
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  const stop = async () => {
    process.removeListener('exit', killOnExit);
    if (running()) child.kill('SIGKILL');
    await exited;
  };

  const startError = once(child, 'error').then(([error]) => error as Error);
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (await ping(port)) return { stop, signal: (signal) => void child.kill(signal) };
    const failed = await Promise.race([startError, new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 50))]);
    if (failed || !running() || Date.now() > deadline) {
      await stop();
      throw new Error(`${binary} did not start on port ${port}: ${failed?.message ?? output}`);
    }
  }
}

/** One raw RESP PING, so readiness does not depend on any client's retry behaviour. */
function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    let reply = '';
    const finish = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => finish(false));
    socket.once('error', () => finish(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      reply += chunk.toString();
      if (reply.includes('\r\n')) finish(reply.startsWith('+PONG'));
    });
  });
}

export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  server.close();
  await once(server, 'close');
  if (address === null || typeof address === 'string') throw new Error('No free TCP port');
  return address.port;
}
