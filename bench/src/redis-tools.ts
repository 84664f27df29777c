import { createRedisClient } from '@idempotency-chain/idempotency/redis';
import type { Redis } from 'ioredis';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';

/** The Redis every measurement runs against. */
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** This run's name: lower-case letters and digits, so it fits a Redis key, a glob and an SQL identifier. */
export const RUN_ID = `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;

/**
 * Every key this run writes starts with it; the run deletes them at the end
 * (the Redis is shared, so FLUSHDB is out of the question).
 */
export const RUN_PREFIX = `bench:${RUN_ID}:`;

/** A connected client with the store's fail-fast options, to `url` (default `REDIS_URL`). */
export async function connect(url = REDIS_URL): Promise<Redis> {
  const client = createRedisClient(url);
  client.on('error', () => undefined);
  await client.connect();
  return client;
}

/** Redis commands a client sends, by name: each is one round trip. */
export interface CommandCounter {
  total(): number;
  byName(): Record<string, number>;
  reset(): void;
}

/** Call `onCommand` with the name of every command `client` sends from now on (one command, one round trip). */
export function onEveryCommand(client: Redis, onCommand: (name: string) => void): void {
  const send = client.sendCommand.bind(client);
  client.sendCommand = (command: { name: string }, stream?: unknown) => {
    onCommand(command.name);
    return send(command as never, stream as never);
  };
}

/** Count every command `client` sends from now on. */
export function countCommands(client: Redis): CommandCounter {
  let counts: Record<string, number> = {};
  onEveryCommand(client, (name) => {
    counts[name] = (counts[name] ?? 0) + 1;
  });
  return {
    total: () => Object.values(counts).reduce((a, b) => a + b, 0),
    byName: () => ({ ...counts }),
    reset: () => {
      counts = {};
    },
  };
}

/** Delete every key matching `<prefix>*`; resolves with how many were deleted. */
export function deleteByPrefix(client: Redis, prefix: string): Promise<number> {
  return deleteMatching(client, `${prefix}*`);
}

/** The keys matching the glob `pattern`, batch by batch (SCAN: the shared Redis is never blocked). */
async function* scanMatching(client: Redis, pattern: string): AsyncGenerator<string[]> {
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', pattern, 'COUNT', 5000);
    if (keys.length > 0) yield keys;
    cursor = next;
  } while (cursor !== '0');
}

/** Delete every key matching the glob `pattern`; resolves with how many were deleted. */
export async function deleteMatching(client: Redis, pattern: string): Promise<number> {
  let deleted = 0;
  for await (const keys of scanMatching(client, pattern)) deleted += await client.unlink(...keys);
  return deleted;
}

/** How many keys match the glob `pattern`. */
export async function countMatching(client: Redis, pattern: string): Promise<number> {
  let found = 0;
  for await (const keys of scanMatching(client, pattern)) found += keys.length;
  return found;
}

/** Delete every key under `prefix` on a connection of its own; resolves with the count. */
export async function cleanUpPrefix(prefix: string): Promise<number> {
  const client = await connect();
  try {
    return await deleteByPrefix(client, prefix);
  } finally {
    await client.quit();
  }
}

/** Latencies of `count` sequential PINGs, in ms: the floor under anything that needs a round trip. */
export async function pingLatencies(client: Redis, count: number): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    await client.ping();
    samples.push(performance.now() - started);
  }
  return samples;
}

/** One section of `INFO`, as a map. */
export async function info(client: Redis, section: string): Promise<Map<string, string>> {
  const text = await client.info(section);
  const entries = text
    .split(/\r?\n/)
    .filter((line) => line.includes(':') && !line.startsWith('#'))
    .map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 1)] as [string, string]);
  return new Map(entries);
}

/**
 * The CPU time the Redis server has used since it started, in ms
 * (`INFO cpu`: user and system, its main thread and every other). Server-wide:
 * whatever any client makes it do counts.
 */
export async function redisCpuMs(client: Redis): Promise<number> {
  const cpu = await info(client, 'cpu');
  const ms = (Number(cpu.get('used_cpu_user')) + Number(cpu.get('used_cpu_sys'))) * 1000;
  if (!Number.isFinite(ms)) throw new Error('INFO cpu answered without used_cpu_user and used_cpu_sys');
  return ms;
}

/** `calls` per command from `INFO commandstats` (server-wide: every client counts). */
export async function commandCalls(client: Redis): Promise<Record<string, number>> {
  const stats = await info(client, 'commandstats');
  const calls: Record<string, number> = {};
  for (const [name, value] of stats) {
    const match = /calls=(\d+)/.exec(value);
    if (name.startsWith('cmdstat_') && match) calls[name.slice('cmdstat_'.length)] = Number(match[1]);
  }
  return calls;
}

/** The `redis-benchmark` arguments that reach the same server as `REDIS_URL`. */
function serverArgs(): string[] {
  const url = new URL(REDIS_URL);
  const args = ['-h', url.hostname || '127.0.0.1', '-p', url.port || '6379'];
  if (url.password) args.push('-a', decodeURIComponent(url.password));
  if (url.username && url.password) args.push('--user', decodeURIComponent(url.username));
  const db = url.pathname.replace('/', '');
  if (db) args.push('--dbnum', db);
  return args;
}

/** The exact `redis-benchmark` command line used for a SET baseline. */
export function redisBenchmarkArgs(clients: number, requests: number, key: string): string[] {
  // One fixed key under the run's prefix: `-t set` would write `key:__rand_int__` into the shared Redis.
  return [...serverArgs(), '-c', String(clients), '-n', String(requests), '-q', 'SET', key, 'xxx'];
}

/** Run `redis-benchmark` SET; resolves with requests per second. */
export function redisBenchmarkSet(clients: number, requests: number, key: string): Promise<number> {
  return new Promise((resolve, reject) => {
    execFile('redis-benchmark', redisBenchmarkArgs(clients, requests, key), { timeout: 60_000 }, (error, stdout) => {
      if (error) return reject(error);
      // -q prints progress with \r, then "SET ...: 123456.79 requests per second, p50=..."
      const matches = [...stdout.matchAll(/([\d.]+) requests per second/g)];
      const last = matches.at(-1);
      if (!last) return reject(new Error(`unexpected redis-benchmark output: ${stdout.slice(-300)}`));
      resolve(Number(last[1]));
    });
  });
}
