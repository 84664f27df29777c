import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer } from 'node:net';
import type { Redis, RedisOptions } from 'ioredis';
import { createRedisClient } from './redis-client';

/** The shared test Redis; never stopped by a test. */
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A connected client with the fail-fast defaults. */
export async function connect(url = REDIS_URL, options: RedisOptions = {}): Promise<Redis> {
  const client = createRedisClient(url, options);
  client.on('error', () => undefined);
  await client.connect();
  return client;
}

/** A key prefix no other test file or run shares. */
export const uniquePrefix = (): string => `test:${randomUUID()}:`;

/** A store key shaped like the coordinator's: a hex hash. */
export const newStoreKey = (): string => randomBytes(16).toString('hex');

/** Delete every key under `prefix`. */
export async function deleteKeys(client: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    if (keys.length > 0) await client.del(...keys);
    cursor = next;
  } while (cursor !== '0');
}

/** Poll `check` until it holds; fail after `timeoutMs`. For conditions with no event to await. */
export async function waitUntil(check: () => boolean | Promise<boolean>, timeoutMs = 5000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Track whether a promise has settled, without awaiting it. */
export function track<T>(promise: Promise<T>): { readonly settled: boolean; readonly promise: Promise<T> } {
  const state = { settled: false, promise };
  promise.then(
    () => (state.settled = true),
    () => (state.settled = true),
  );
  return state;
}

/** A throwaway redis-server child on a free port, for outage tests. */
export interface PrivateRedis {
  url: string;
  kill(): Promise<void>;
}

export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  const child = spawn(
    process.env.REDIS_SERVER_BIN ?? 'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const exited = once(child, 'exit');
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`redis-server did not start:\n${output}`)), 10_000);
    child.once('error', reject);
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Ready to accept connections')) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  child.stdout.resume();
  child.stderr.resume();
  return {
    url: `redis://127.0.0.1:${port}`,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  server.close();
  await once(server, 'close');
  if (address === null || typeof address === 'string') throw new Error('No TCP port');
  return address.port;
}
