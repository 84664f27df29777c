import { randomBytes, randomUUID } from 'node:crypto';
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
export const newRecordKey = (): string => randomBytes(16).toString('hex');

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

export { track } from '../../test/support/async';
