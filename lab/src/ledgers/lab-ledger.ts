import { createRedisClient } from '@idempotency-chain/idempotency/redis';
import type { Ledger } from '@idempotency-chain/payments';
import { reportOutages, type ServiceConfig } from '@idempotency-chain/service-runtime';
import type { LabConfig } from '../lab-config';
import { MemoryLedger } from './memory-ledger';
import { RedisLedger } from './redis-ledger';

/**
 * The ledger the lab gives payments on a store payments refuses (it requires
 * PostgreSQL): beside the records, in this process or in Redis
 * (`LEDGER_REDIS_URL`, else the records' Redis), keeping a record's charge
 * and fence as long as the record.
 *
 * Like payments' own, the Redis ledger connects in its `onModuleInit`, so a
 * Redis that does not answer fails the boot with one line naming it.
 */
export function labLedger(store: 'memory' | 'redis', config: ServiceConfig, lab: LabConfig): Ledger {
  if (store === 'memory') return new MemoryLedger(config.retentionMs);
  const redis = createRedisClient(lab.ledgerRedisUrl ?? config.redisUrl);
  reportOutages(redis, 'ledger'); // charges answer 503 meanwhile (see `ledgerUnavailable`)
  return new RedisLedger(redis, config.retentionMs, undefined, true);
}
