import { hash, randomBytes, randomUUID } from 'node:crypto';
import type { Cluster, Redis, RedisOptions } from 'ioredis';
import { createRedisClient } from './redis-client';
import { RedisStore } from './redis-store';
import { HEADER_BYTES } from './scripts';

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

/** A record key shaped like the coordinator's: SHA-256 in hex. */
export const newRecordKey = (): string => randomBytes(32).toString('hex');

/** An owner token as a record keeps it, in hex: the first 64 bits of its SHA-256 (see `scripts.ts`). */
export const keptOwner = (owner: string): string => hash('sha256', owner, 'hex').slice(0, 16);

/** Delete every key under `prefix`. */
export async function deleteKeys(client: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    if (keys.length > 0) await client.del(...keys);
    cursor = next;
  } while (cursor !== '0');
}

/**
 * A store on the shared Redis under a prefix of its own, for the `describe`
 * this is called in: connected before its tests, its keys deleted after.
 */
export function sharedRedisStore(): { prefix: string; client: () => Redis; store: () => RedisStore } {
  const prefix = uniquePrefix();
  let client: Redis | undefined;
  let store: RedisStore | undefined;
  beforeAll(async () => {
    client = await connect();
    store = new RedisStore({ client, prefix });
  });
  afterAll(async () => {
    await store?.close();
    if (client) {
      await deleteKeys(client, prefix);
      await client.quit();
    }
  });
  return { prefix, client: () => client as Redis, store: () => store as RedisStore };
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

/** A format 2 record (see `scripts.ts`) split into its parts, the fingerprint and owner in hex. */
function parseRecord(value: Buffer): { state: string; fp: string; owner: string; epoch: string; result: string } {
  if (value.length < HEADER_BYTES || value.toString('latin1', 0, 2) !== '2\n') {
    throw new Error(`not a format 2 record: ${JSON.stringify(value.toString('latin1', 0, 40))}`);
  }
  return {
    state: value.toString('latin1', 2, 3),
    fp: value.toString('hex', 3, 19),
    owner: value.toString('hex', 19, 27),
    epoch: String(value.readUIntBE(27, 6)),
    result: value.toString('utf8', HEADER_BYTES),
  };
}

/**
 * The record at `key` by field, as the hash of earlier releases named them
 * (`status`, `fp`, `owner`, `epoch`, `result`, `w`; the fingerprint and the
 * owner as the record keeps them, in hex); `undefined` when there is none.
 */
export async function readRecord(client: Redis | Cluster, key: string): Promise<Record<string, string> | undefined> {
  const value = await client.getBuffer(key);
  if (value === null) return undefined;
  const { state, fp, owner, epoch, result } = parseRecord(value);
  return {
    status: state === 'c' ? 'completed' : 'in_progress',
    fp,
    owner,
    epoch,
    ...(state === 'c' && { result }),
    ...(state === 'w' && { w: '1' }),
  };
}

/** Put `result` in place of the completed record's at `key`, keeping its TTL (a store written by someone else). */
export async function replaceResult(client: Redis | Cluster, key: string, result: string): Promise<void> {
  const value = (await client.getBuffer(key)) ?? Buffer.alloc(0);
  parseRecord(value);
  await client.set(key, Buffer.concat([value.subarray(0, HEADER_BYTES), Buffer.from(result, 'utf8')]), 'KEEPTTL');
}
