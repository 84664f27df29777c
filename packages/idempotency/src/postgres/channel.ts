import { createHash } from 'node:crypto';

/** PostgreSQL's longest identifier, and so the longest channel `pg_notify` accepts (NAMEDATALEN - 1). */
const MAX_CHANNEL_BYTES = 63;
const PREFIX = 'idempotency:';

/**
 * The `LISTEN/NOTIFY` channel of the store in `schema`: `idempotency:<schema>`
 * while that fits in an identifier, so stores of earlier versions still hear
 * each other; for a longer schema name (up to 63 characters is legal),
 * `idempotency:` and a hash of it, since `pg_notify` rejects a longer channel
 * and every completion would fail.
 */
export function channelName(schema: string): string {
  const readable = `${PREFIX}${schema}`;
  if (Buffer.byteLength(readable) <= MAX_CHANNEL_BYTES) return readable;
  return (
    PREFIX +
    createHash('sha256')
      .update(schema)
      .digest('hex')
      .slice(0, MAX_CHANNEL_BYTES - PREFIX.length)
  );
}
