import { createHmac, randomBytes } from 'node:crypto';
import { parseIdempotencyKey } from './key';

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

/**
 * The hash of the key an `Idempotency-Key` header carries, as `hashKey`
 * hashes it (the key, not its quotes); `undefined` for no header, or one that
 * carries no valid key (refused with 400 before any record: nothing to
 * correlate). For a request log's serializer, so its lines carry the same
 * hash as the idempotency decisions, and never the key.
 *
 * @example
 * // nestjs-pino
 * LoggerModule.forRoot({ pinoHttp: { serializers: {
 *   req: (req) => ({ method: req.method, url: req.url, keyHash: headerKeyHash(req.headers['idempotency-key']) }),
 * } } });
 *
 * @public
 */
export function headerKeyHash(header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined;
  try {
    return hashKey(parseIdempotencyKey(header));
  } catch {
    return undefined;
  }
}
