import { MemoryStore, type IdempotencyStore, type OperationPolicy } from '@idempotency-chain/idempotency';
import { createPostgresPool, PostgresStore } from '@idempotency-chain/idempotency/postgres';
import { createRedisClient, RedisStore } from '@idempotency-chain/idempotency/redis';
import type { ServiceConfig } from './config';
import { reportOutages } from './outages';

/**
 * The store the configuration names (`IDEMPOTENCY_STORE`), owning its
 * connection: `IdempotencyModule` connects it at boot (on PostgreSQL,
 * applying the store's migrations) and, under `closeStore`, closes it on
 * shutdown.
 */
export function idempotencyStore(config: ServiceConfig): IdempotencyStore {
  switch (config.store) {
    case 'memory':
      return new MemoryStore();
    case 'postgres':
      return new PostgresStore({ pool: createPostgresPool(config.databaseUrl), ownsPool: true, migrateOnConnect: true });
    case 'redis': {
      const client = createRedisClient(config.redisUrl);
      reportOutages(client, 'idempotency store');
      return new RedisStore({ client, ownsClient: true });
    }
  }
}

/** The policy of every operation of a service, from its environment: lease, retention, in-flight and store-failure answers. */
export function operationPolicy(config: ServiceConfig): Partial<OperationPolicy> {
  return {
    leaseMs: config.leaseMs,
    retentionMs: config.retentionMs,
    inFlight: config.inFlight,
    onStoreFailure: config.onStoreFailure,
  };
}
