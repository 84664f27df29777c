import { createHmac, randomBytes } from 'node:crypto';

/**
 * Where a deployment sets the secret its key hashes are keyed with.
 *
 * @public
 */
export const KEY_HASH_SECRET_ENV = 'IDEMPOTENCY_KEY_HASH_SECRET';

// Without a configured secret, a random one per process: hashes still
// correlate within the process, and nobody can recover a key from them.
const processSecret = randomBytes(32);

/**
 * Short form of a key for logs, metrics and spans: the first 12 hex digits
 * of HMAC-SHA-256(secret, key). Every log line, metric and span of this
 * project uses it, so one key has one hash everywhere.
 *
 * Keyed because keys are often guessable (an order number): an unkeyed hash
 * of one is recovered by hashing candidates. The secret is `secret`, else
 * the environment's `IDEMPOTENCY_KEY_HASH_SECRET` (set the same value on
 * every replica so their logs correlate), else a random value drawn once per
 * process (safe, but two processes then hash one key differently).
 *
 * Hash the key itself, parsed from its header (`parseIdempotencyKey`): the
 * header's quotes are not part of it.
 *
 * @example
 * logger.info({ keyHash: hashKey(parseIdempotencyKey(header)) }, 'charging');
 *
 * @public
 */
export function hashKey(key: string, secret: string | Buffer = process.env[KEY_HASH_SECRET_ENV] || processSecret): string {
  return createHmac('sha256', secret).update(key).digest('hex').slice(0, 12);
}
