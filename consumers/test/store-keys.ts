import type { Redis } from 'ioredis';

/**
 * Every key under `prefix` in the shared Redis. The scratch apps write their
 * records under a prefix of their own: the test finds them there (the app
 * really used Redis) and deletes them (a run leaves nothing behind).
 */
export async function keysUnder(redis: Redis, prefix: string): Promise<string[]> {
  const found: string[] = [];
  for await (const keys of redis.scanStream({ match: `${prefix}*`, count: 200 }) as AsyncIterable<string[]>) found.push(...keys);
  return found;
}
