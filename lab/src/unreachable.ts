import { UnreachableError } from '@idempotency-chain/payments';
import type { Redis } from 'ioredis';

/**
 * Connect `client` at boot (one created with `lazyConnect`, like
 * `createRedisClient`'s) or throw {@link UnreachableError}. ioredis rejects
 * `connect()` with a bare "Connection is closed."; the reason worth printing
 * (`connect ECONNREFUSED ...`) comes as an `error` event, caught here, which
 * also keeps ioredis from printing it as an unhandled event with its stack. A
 * client that failed is disconnected: left alone it would keep reconnecting,
 * and keep the process alive.
 *
 * @example
 * async onModuleInit() {
 *   await connectRedis(this.client); // the boot fails, naming Redis, when it does not answer
 * }
 */
export async function connectRedis(client: Redis): Promise<void> {
  let reason: unknown;
  const note = (error: unknown) => (reason ??= error);
  client.on('error', note);
  try {
    await client.connect();
  } catch (error) {
    client.disconnect();
    throw new UnreachableError('Redis', redisAddress(client), reason ?? error);
  } finally {
    client.off('error', note);
  }
}

/** Where `client` connects, from its options (which never hold the URL it was given, so no password either). */
function redisAddress(client: Redis): string {
  const { host, port, path, db, tls } = client.options;
  if (path) return `unix:${path}`;
  return `${tls ? 'rediss' : 'redis'}://${host ?? '127.0.0.1'}:${port ?? 6379}${db ? `/${db}` : ''}`;
}

/**
 * What a failed boot prints after the service's name: a store that did not
 * answer or a configuration the app refused, as its one-line message, which
 * is all an operator needs; anything else, a bug, with its stack. Known by
 * their names: the apps throw classes of their own (payments' ledger its
 * `UnreachableError`, each app its `ConfigError`).
 */
export function bootFailure(error: unknown): string {
  const name = (error as Error | undefined)?.name;
  if (name === 'UnreachableError' || name === 'ConfigError') return (error as Error).message;
  return `cannot start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`;
}
