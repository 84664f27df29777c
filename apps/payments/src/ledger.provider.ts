import { createPostgresPool } from '@idempotency-chain/idempotency/postgres';
import type { FactoryProvider } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { PaymentsConfig } from './config.js';
import type { Ledger } from './ledger.js';
import { PostgresLedger } from './postgres-ledger.js';

/** Injection token of the ledger: the lab decorates or replaces payments' ledger by it. */
export const LEDGER = Symbol('LEDGER');

/**
 * The ledger lives beside the idempotency records, in PostgreSQL
 * (`DATABASE_URL`): each charge is written in the transaction that
 * completes its record (`transactional`, see `PaymentsModule`), so a crash
 * leaves both or neither. It creates its table in its own `onModuleInit`,
 * not here: a factory that throws fails inside Nest's instance loader, which
 * prints the error with its stack; an init hook's error reaches `main.ts`,
 * which prints one line naming the database.
 */
export const ledgerProvider: FactoryProvider<Ledger> = {
  provide: LEDGER,
  inject: [ConfigService],
  useFactory: (config: ConfigService<PaymentsConfig, true>) =>
    new PostgresLedger(createPostgresPool(config.get('DATABASE_URL', { infer: true })), { ownsPool: true, transactional: true }),
};
