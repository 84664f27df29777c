import { createPostgresPool } from '@idempotency-chain/idempotency/postgres';
import { createRedisClient } from '@idempotency-chain/idempotency/redis';
import { reportOutages, type ServiceConfig } from '@idempotency-chain/service-runtime';
import type { FactoryProvider } from '@nestjs/common';
import { MemoryLedger, type Ledger } from './ledger';
import { PostgresLedger } from './postgres-ledger';
import { RedisLedger } from './redis-ledger';

/** Injection token of the ledger. */
export const LEDGER = Symbol('LEDGER');

/**
 * The ledger lives beside the idempotency records: in PostgreSQL or Redis
 * when they are (`LEDGER_REDIS_URL` may name another Redis, so that an
 * outage of the records' Redis leaves it up), in this process otherwise.
 * It keeps a record's charge and fence as long as the record.
 *
 * The ledger connects in its own `onModuleInit`, not here: a factory that
 * throws fails inside Nest's instance loader, which prints the error with its
 * stack and exits; an init hook's error reaches `runService`, which prints
 * the one line that names the store that did not answer.
 */
export function ledgerProvider(config: ServiceConfig): FactoryProvider<Ledger> {
  return { provide: LEDGER, useFactory: () => openLedger(config) };
}

function openLedger(config: ServiceConfig): Ledger {
  switch (config.store) {
    case 'memory':
      return new MemoryLedger(config.retentionMs);
    case 'postgres':
      // payments completes its records in the store's transaction on PostgreSQL (see `PaymentsModule`).
      return new PostgresLedger(createPostgresPool(config.databaseUrl), { ownsPool: true, transactional: true });
    case 'redis': {
      const redis = createRedisClient(config.ledgerRedisUrl);
      reportOutages(redis, 'ledger'); // charges answer 503 meanwhile (see `ledgerUnavailable`)
      return new RedisLedger(redis, config.retentionMs, undefined, true);
    }
  }
}
