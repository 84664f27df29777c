import { MemoryStore, type IdempotencyStore } from '@idempotency-chain/idempotency';
import { RedisStore, createRedisClient } from '@idempotency-chain/idempotency/redis';
import { createPostgresPool, migrate, PostgresStore } from '@idempotency-chain/idempotency/postgres';
import type { Redis } from 'ioredis';
import type { Pool } from 'pg';
import type { ServiceConfig } from './config';

/** The store a service keeps its records in, and its Redis connection when it has one. */
export interface StoreBinding {
  store: IdempotencyStore;
  /** Shared with what must live beside the records (the payments ledger). */
  redis?: Redis;
  pool?: Pool;
  /** Open the connection (Redis clients are created lazily, failing fast). */
  connect(): Promise<void>;
  /** True when the store answers. */
  ping(): Promise<boolean>;
}

/** Build the store the configuration names. */
export function createStore(config: ServiceConfig): StoreBinding {
  if (config.store === 'memory') {
    return { store: new MemoryStore(), connect: async () => undefined, ping: async () => true };
  }
  if (config.store === 'postgres') {
    const pool = createPostgresPool(config.databaseUrl);
    return {
      store: new PostgresStore({ pool, ownsPool: true }),
      pool,
      connect: () => migrate(pool).then(() => undefined),
      ping: async () => (await pool.query('SELECT 1')).rowCount === 1,
    };
  }
  const redis = createRedisClient(config.redisUrl);
  return {
    store: new RedisStore({ client: redis, ownsClient: true }),
    redis,
    connect: () => redis.connect(),
    ping: async () => (await redis.ping()) === 'PONG',
  };
}
