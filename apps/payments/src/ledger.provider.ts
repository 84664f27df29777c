import { createRedisClient } from '@idempotency-chain/idempotency/redis';
import { SERVICE_CONFIG, STORE, type ServiceConfig, type StoreBinding } from '@idempotency-chain/lab-service';
import type { Provider } from '@nestjs/common';
import { MemoryLedger, PlainLedger, PostgresLedger, RedisLedger, type Ledger } from './ledger';

/** Injection token of the ledger. */
export const LEDGER = Symbol('LEDGER');

/**
 * The ledger lives beside the idempotency records: in PostgreSQL or Redis
 * when they are (`LEDGER_REDIS_URL` may name another Redis, so a store
 * outage leaves it up).
 */
export const ledgerProvider: Provider = {
  provide: LEDGER,
  useFactory: async (config: ServiceConfig, binding: StoreBinding): Promise<Ledger> => {
    const ledger = await openLedger(config, binding);
    return config.naive.has('plain-ledger') ? new PlainLedger(ledger) : ledger;
  },
  inject: [SERVICE_CONFIG, STORE],
};

async function openLedger(config: ServiceConfig, binding: StoreBinding): Promise<Ledger> {
  if (binding.pool) return new PostgresLedger(binding.pool).open();
  if (!binding.redis) return new MemoryLedger(config.retentionMs);
  if (config.ledgerRedisUrl === config.redisUrl) return new RedisLedger(binding.redis, config.retentionMs);
  const redis = createRedisClient(config.ledgerRedisUrl);
  await redis.connect();
  return new RedisLedger(redis, config.retentionMs);
}
