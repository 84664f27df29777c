import type { IdempotencyStore } from '@idempotency-chain/idempotency';
import { createPostgresPool, PostgresStore } from '@idempotency-chain/idempotency/postgres';
import type { ConfigService } from '@nestjs/config';
import type { PaymentsConfig } from './config.js';

/**
 * The idempotency records, in PostgreSQL (`DATABASE_URL`), owning their
 * pool: `IdempotencyModule` connects the store at boot, applying its
 * migrations, and, under `closeStore`, closes it on shutdown. The ledger is
 * in the same database, so a charge commits with its record.
 */
export function idempotencyStore(config: ConfigService<PaymentsConfig, true>): IdempotencyStore {
  const pool = createPostgresPool(config.get('DATABASE_URL', { infer: true }));
  return new PostgresStore({ pool, ownsPool: true, migrateOnConnect: true });
}
