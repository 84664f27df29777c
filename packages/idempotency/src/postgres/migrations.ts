/**
 * The schema of `PostgresStore`, as numbered migrations that `migrate()`
 * applies in order and records in `<schema>.idempotency_schema_versions`.
 * A released migration is never edited: a change is a new entry.
 *
 * `idempotency_records` holds one row per store key. The row outlives its
 * record: once a lease ends, a key is released, or retention passes, the row
 * stays (with `expires_at` in the past) until the sweep removes it
 * `fenceRetentionMs` later, because its `epoch` is the fence the next claim
 * of the key must exceed. Its `format` names the layout the row was written
 * in (`RECORD_FORMAT` in `sql.ts`); a store refuses a row of another.
 */
export interface Migration {
  version: number;
  name: string;
  /** The statements, for the schema whose quoted name is `schema`. */
  sql(schema: string): string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'create idempotency_records',
    sql: (schema) => `
      CREATE TABLE ${schema}.idempotency_records (
        store_key   text        PRIMARY KEY,
        status      text        NOT NULL CHECK (status IN ('in_progress', 'completed', 'released')),
        fingerprint text        NOT NULL,
        owner       text        NOT NULL,
        epoch       bigint      NOT NULL CHECK (epoch > 0),
        result      text,
        expires_at  timestamptz NOT NULL
      );
      CREATE INDEX idempotency_records_expires_at ON ${schema}.idempotency_records (expires_at);
    `,
  },
  {
    // Rows written before this migration are in format 1: the columns above, read as they were.
    version: 2,
    name: 'add idempotency_records.format',
    sql: (schema) => `
      ALTER TABLE ${schema}.idempotency_records ADD COLUMN format smallint NOT NULL DEFAULT 1;
    `,
  },
  {
    // The holder's last renewal and heartbeat, for an operator to tell a holder still running from a silent
    // one (see `HolderState`). Nullable: a row claimed before, or by an earlier release, keeps neither, and
    // its holder counts as alive; an earlier release reads and writes the rows as it did.
    version: 3,
    name: 'add idempotency_records.renewed_at and heartbeat_ms',
    sql: (schema) => `
      ALTER TABLE ${schema}.idempotency_records ADD COLUMN renewed_at timestamptz, ADD COLUMN heartbeat_ms integer;
    `,
  },
];

/** The newest migration: the schema version this release reads and writes. */
export const SCHEMA_VERSION = Math.max(...MIGRATIONS.map((migration) => migration.version));

/** The columns of `idempotency_records` at {@link SCHEMA_VERSION}: a migration that adds one the statements use adds it here. */
export const RECORD_COLUMNS: readonly string[] = [
  'store_key',
  'status',
  'fingerprint',
  'owner',
  'epoch',
  'result',
  'expires_at',
  'format',
  'renewed_at',
  'heartbeat_ms',
];
