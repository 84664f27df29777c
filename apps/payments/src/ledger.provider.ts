import { createPostgresPool } from '@idempotency-chain/idempotency/postgres';
import { ConfigError, type ServiceConfig } from '@idempotency-chain/service-runtime';
import type { FactoryProvider, OnModuleInit } from '@nestjs/common';
import type { Ledger } from './ledger';
import { PostgresLedger } from './postgres-ledger';

/** Injection token of the ledger. */
export const LEDGER = Symbol('LEDGER');

/**
 * The ledger lives beside the idempotency records, in PostgreSQL: each
 * charge is written in the transaction that completes its record (see
 * `PaymentsModule`), so a crash leaves both or neither.
 *
 * payments requires PostgreSQL; on any other store it does not start. A
 * ledger in this process loses the money taken with the process, and one in
 * Redis beside records in Redis is a second write that no transaction ties
 * to the record's completion, as durable as that Redis's persistence. The
 * lab, which runs payments on those stores to count charges, provides
 * ledgers of its own by the `LEDGER` token.
 *
 * The ledger connects, or refuses the store, in its own `onModuleInit`, not
 * here: a factory that throws fails inside Nest's instance loader, which
 * prints the error with its stack and exits; an init hook's error reaches
 * `runService`, which prints one line naming the store or the variable.
 */
export function ledgerProvider(config: ServiceConfig): FactoryProvider<Ledger | StoreRefused> {
  return {
    provide: LEDGER,
    useFactory: () =>
      config.store === 'postgres'
        ? new PostgresLedger(createPostgresPool(config.databaseUrl), { ownsPool: true, transactional: true })
        : new StoreRefused(config.store),
  };
}

/** What payments has instead of a ledger on a store other than PostgreSQL: a boot that stops. */
class StoreRefused implements OnModuleInit {
  constructor(private readonly store: ServiceConfig['store']) {}

  onModuleInit(): never {
    throw new ConfigError(
      `IDEMPOTENCY_STORE=${JSON.stringify(this.store)} is not valid for payments: expected postgres, with DATABASE_URL ` +
        'naming the database that keeps the records and the ledger (each charge commits with its record)',
    );
  }
}
