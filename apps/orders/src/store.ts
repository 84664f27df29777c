import { MemoryStore, type IdempotencyStore } from '@idempotency-chain/idempotency';
import { createPostgresPool, PostgresStore } from '@idempotency-chain/idempotency/postgres';
import { createRedisClient, RedisStore } from '@idempotency-chain/idempotency/redis';
import { Logger } from '@nestjs/common';
import type { ConfigService } from '@nestjs/config';
import type { Redis } from 'ioredis';
import type { OrdersConfig } from './config.js';

/**
 * The store `IDEMPOTENCY_STORE` names, owning its connection:
 * `IdempotencyModule` connects it at boot (on PostgreSQL, applying the
 * store's migrations) and, under `closeStore`, closes it on shutdown.
 */
export function idempotencyStore(config: ConfigService<OrdersConfig, true>): IdempotencyStore {
  switch (config.get('IDEMPOTENCY_STORE', { infer: true })) {
    case 'memory':
      return new MemoryStore();
    case 'postgres': {
      const pool = createPostgresPool(config.get('DATABASE_URL', { infer: true }));
      return new PostgresStore({ pool, ownsPool: true, migrateOnConnect: true });
    }
    case 'redis': {
      const client = createRedisClient(config.get('REDIS_URL', { infer: true }));
      reportOutages(client);
      return new RedisStore({ client, ownsClient: true });
    }
  }
}

/**
 * One warning when Redis goes away (its reason, no stack), one line when it
 * is back: without an `error` listener ioredis prints every failed
 * reconnection, with its stack, for as long as the outage lasts. Requests
 * meanwhile answer 503, and `/health` says `down`.
 */
function reportOutages(client: Redis, logger = new Logger('Redis')): void {
  let down = false;
  client.on('error', (error: Error) => {
    if (down) return;
    down = true;
    logger.warn(`idempotency store: Redis does not answer (${error.message || String(error)}); requests answer 503 until it is back`);
  });
  client.on('ready', () => {
    if (!down) return;
    down = false;
    logger.log('idempotency store: Redis answers again');
  });
}
