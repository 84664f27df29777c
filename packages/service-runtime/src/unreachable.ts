import type { Redis } from 'ioredis';

/**
 * A store the service cannot start without did not answer at boot. Its
 * message is meant for the operator, on one line, naming the store and where
 * it was looked for (never with a password), then the driver's reason:
 * `cannot reach Redis at redis://127.0.0.1:6390: connect ECONNREFUSED 127.0.0.1:6390`.
 * `runService` prints it as it is and exits 1.
 */
export class UnreachableError extends Error {
  override name = 'UnreachableError';

  constructor(
    /** What did not answer, e.g. `Redis`, `PostgreSQL`. */
    readonly what: string,
    address: string,
    cause: unknown,
  ) {
    super(`cannot reach ${what} at ${redactedAddress(address)}: ${reasonOf(cause)}`, { cause });
  }
}

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

/** `address` with the password of a URL replaced by `***`; anything else as it is. */
function redactedAddress(address: string): string {
  try {
    const url = new URL(address);
    if (!url.password) return address;
    url.password = '***';
    return url.toString();
  } catch {
    return address;
  }
}

/**
 * The driver's reason, on one line. Node's connect to a name with several
 * addresses (`localhost`) fails with an `AggregateError` whose own message is
 * empty: its first error's is used then.
 */
function reasonOf(cause: unknown): string {
  const error = cause as { message?: unknown; code?: unknown; errors?: unknown[] } | null | undefined;
  const first = Array.isArray(error?.errors) ? (error.errors[0] as { message?: unknown } | undefined) : undefined;
  const reason = [error?.message, first?.message, error?.code].find((value) => typeof value === 'string' && value !== '');
  return String(reason ?? cause)
    .replace(/\s+/g, ' ')
    .trim();
}
