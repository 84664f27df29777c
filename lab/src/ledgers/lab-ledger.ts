import { MemoryStore, type IdempotencyStore } from '@idempotency-chain/idempotency';
import { createRedisClient, RedisStore } from '@idempotency-chain/idempotency/redis';
import type { Ledger } from '@idempotency-chain/payments';
import type { LabConfig } from '../lab-config';
import { reportOutages } from '../outages';
import type { LabStore } from '../services';
import { MemoryLedger } from './memory-ledger';
import { RedisLedger } from './redis-ledger';

/**
 * payments' idempotency records on a store payments refuses, owning their
 * connection as payments' own store does: in this process, or in Redis
 * (`REDIS_URL`), its outages logged once.
 */
export function labRecords(labStore: LabStore): IdempotencyStore {
  if (labStore.store === 'memory') return new MemoryStore();
  const client = createRedisClient(labStore.redisUrl);
  reportOutages(client, 'idempotency store');
  return new RedisStore({ client, ownsClient: true });
}

/**
 * The ledger the lab gives payments on a store payments refuses (it requires
 * PostgreSQL): beside the records, in this process or in Redis
 * (`LEDGER_REDIS_URL`, else the records' Redis), keeping a record's charge
 * and fence as long as the record.
 *
 * Like payments' own, the Redis ledger connects in its `onModuleInit`, so a
 * Redis that does not answer fails the boot with one line naming it.
 */
export function labLedger(labStore: LabStore, retentionMs: number, lab: LabConfig): Ledger {
  if (labStore.store === 'memory') return new MemoryLedger(retentionMs);
  const redis = createRedisClient(lab.ledgerRedisUrl ?? labStore.redisUrl);
  reportOutages(redis, 'ledger'); // charges answer 503 meanwhile (see `ledgerUnavailable`)
  return new RedisLedger(redis, retentionMs, undefined, true);
}
