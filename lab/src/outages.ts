import { Logger } from '@nestjs/common';
import type { Redis } from 'ioredis';

/**
 * Log a Redis client's outages as an operator wants them: one warning when
 * it loses its server (with the reason, no stack), one line when it is back.
 * Without an `error` listener ioredis prints every failed reconnection, with
 * its stack, for as long as the outage lasts; requests meanwhile answer 503.
 *
 * @param what Which store this is, e.g. `idempotency store`, `ledger`.
 * @example
 * const client = createRedisClient(url);
 * reportOutages(client, 'ledger');
 */
export function reportOutages(client: Redis, what: string, logger = new Logger('Redis')): void {
  let down = false;
  client.on('error', (error: Error) => {
    if (down) return;
    down = true;
    logger.warn(`${what}: Redis does not answer (${error.message || String(error)}); requests that need it answer 503 until it is back`);
  });
  client.on('ready', () => {
    if (!down) return;
    down = false;
    logger.log(`${what}: Redis answers again`);
  });
}
