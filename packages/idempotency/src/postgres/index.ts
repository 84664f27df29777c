/**
 * The PostgreSQL store, its own subpath (`@idempotency-chain/idempotency/postgres`)
 * so that the core never loads `pg`: `PostgresStore` with transactional
 * completion, the `migrate()` that creates its schema, and helpers.
 */
export { PostgresStore, type PostgresStoreOptions } from './postgres-store';
export { migrate, type MigrateOptions } from './migrate';
export { createPostgresPool, postgresTransaction, type PostgresExecution } from './postgres-execution';
