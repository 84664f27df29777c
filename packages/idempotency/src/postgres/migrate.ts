import type { Pool, PoolClient } from 'pg';
import { MIGRATIONS, type Migration } from './migrations';

/**
 * Options of {@link migrate}.
 *
 * @public
 */
export interface MigrateOptions {
  /** The schema that holds the store's tables; created if missing. Default `public`. */
  schema?: string;
  /**
   * How long a migration waits for a table lock before it gives up, in
   * milliseconds. An `ALTER TABLE` waits behind every open transaction on the
   * table, and every query that comes after waits behind it: on a busy store
   * an unbounded wait stops all traffic. Given up, `migrate()` rejects and
   * changes nothing; call it again (under `migrateOnConnect` the store does,
   * 30 s later). A caller that waited its turn behind another one that left
   * the schema behind (gave up) rejects too, without waiting for the table:
   * replicas that boot together hold the table up once, not once each.
   * Default 3000.
   */
  lockTimeoutMs?: number;
  /** @internal The migrations to apply (tests); default the package's own. */
  migrations?: readonly Migration[];
  /**
   * @internal Give up at once, without waiting for the table, when a
   * migration of the schema gave up on its table lock less than this many
   * milliseconds ago, by any caller (`migrateOnConnect` passes its retry
   * interval): each attempt holds every query of the table up for up to
   * `lockTimeoutMs`, so N replicas each trying on their own schedule would
   * hold it up N times per interval. Unset: try whatever happened before.
   */
  backOffMs?: number;
}

/**
 * The table where a migration that gave up on its table lock leaves when,
 * for every caller of the schema to back off from (see `backOffMs`). One
 * row, created the first time one gives up; not part of the records'
 * schema, so no migration of it.
 */
const GAVE_UP = 'idempotency_migration_gave_up';

/** PostgreSQL's `lock_not_available`: `lock_timeout` ran out. */
const LOCK_NOT_AVAILABLE = '55P03';

/**
 * Bring the `PostgresStore` schema up to date: apply, in one transaction, every
 * migration whose version `<schema>.idempotency_schema_versions` does not list,
 * and record it there. Idempotent: a second call applies nothing. Safe under
 * concurrent callers (every replica of a service migrating at boot): a
 * transaction-scoped advisory lock on the schema's name makes them take
 * turns, and a later caller, reading the versions only once it holds the
 * lock, finds the work done. A failing migration rolls back with everything
 * applied in the same call.
 *
 * @returns The versions this call applied (empty when already up to date).
 * @example
 * const pool = new Pool({ connectionString: process.env.DATABASE_URL });
 * await migrate(pool); // at boot, before the first request
 * const store = new PostgresStore({ pool });
 *
 * @public
 */
export async function migrate(pool: Pool, options: MigrateOptions = {}): Promise<number[]> {
  const schema = quoteSchema(options.schema ?? 'public');
  const migrations = [...(options.migrations ?? MIGRATIONS)].sort((a, b) => a.version - b.version);
  const lockTimeoutMs = options.lockTimeoutMs ?? 3000;
  if (!Number.isSafeInteger(lockTimeoutMs) || lockTimeoutMs <= 0) {
    throw new RangeError(`lockTimeoutMs must be a positive integer (got ${String(lockTimeoutMs)})`);
  }
  const client = await pool.connect();
  let failed: Error | undefined;
  try {
    await client.query('BEGIN');
    const turn = [`idempotency-chain:migrate:${schema}`];
    const { rows: free } = await client.query<{ free: boolean }>('SELECT pg_try_advisory_xact_lock(hashtext($1)) AS free', turn);
    // Another caller's turn: wait for it to end, then look at what it left.
    const waited = free[0]?.free !== true;
    if (waited) await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', turn);
    // Set once the migrators' turn is ours: a replica waiting for another one's migration is not a lock to give up on.
    await client.query(`SET LOCAL lock_timeout = ${lockTimeoutMs}`);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${schema}.idempotency_schema_versions (
         version    integer     PRIMARY KEY,
         name       text        NOT NULL,
         applied_at timestamptz NOT NULL DEFAULT now()
       )`,
    );
    const { rows } = await client.query<{ version: number }>(`SELECT version FROM ${schema}.idempotency_schema_versions`);
    const applied = new Set(rows.map((row) => row.version));
    // The caller before this one left work undone: it gave up (a table lock held past lockTimeoutMs, most likely
    // by the transaction still open). Waiting for the same lock again at once would hold every query of the table
    // up once more, back to back for every replica that queued behind it: give up now instead.
    const pending = migrations.some((migration) => !applied.has(migration.version));
    if (waited && pending) {
      throw new Error(`Another migration of schema ${schema} ended just before this one's turn without applying it: try again later`);
    }
    if (pending && options.backOffMs !== undefined) await backOff(client, schema, options.backOffMs);
    await client.query('SAVEPOINT migrations');
    const done: number[] = [];
    try {
      for (const migration of migrations) {
        if (applied.has(migration.version)) continue;
        await client.query(migration.sql(schema));
        await client.query(`INSERT INTO ${schema}.idempotency_schema_versions (version, name) VALUES ($1, $2)`, [
          migration.version,
          migration.name,
        ]);
        done.push(migration.version);
      }
    } catch (error) {
      if ((error as { code?: unknown }).code === LOCK_NOT_AVAILABLE) await noteGaveUp(client, schema);
      throw error;
    }
    await client.query('COMMIT');
    return done;
  } catch (error) {
    failed = error instanceof Error ? error : new Error(String(error));
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release(failed);
  }
}

/** Reject when a migration of `schema` gave up on its table lock less than `backOffMs` ago (see `MigrateOptions.backOffMs`). */
async function backOff(client: PoolClient, schema: string, backOffMs: number): Promise<void> {
  const { rows: table } = await client.query<{ present: boolean }>('SELECT to_regclass($1) IS NOT NULL AS present', [
    `${schema}.${GAVE_UP}`,
  ]);
  if (table[0]?.present !== true) return;
  const { rows } = await client.query<{ ago: number }>(
    `SELECT (extract(epoch FROM clock_timestamp() - at) * 1000)::float8 AS ago FROM ${schema}.${GAVE_UP}`,
  );
  const ago = rows[0]?.ago;
  if (ago !== undefined && ago < backOffMs) {
    throw new Error(
      `A migration of schema ${schema} gave up on its table lock ${Math.round(ago)} ms ago: ` +
        `the next attempt, by any caller, is ${backOffMs} ms after it, so the table's queries are held up once per interval`,
    );
  }
}

/**
 * Note, in the same transaction, that this migration gave up on its table
 * lock: its migrations are undone (back to the savepoint), the note is
 * committed. A note that cannot be written (a role without CREATE) only
 * loses the shared back-off; the migration's own error is what the caller
 * gets either way.
 */
async function noteGaveUp(client: PoolClient, schema: string): Promise<void> {
  try {
    await client.query('ROLLBACK TO SAVEPOINT migrations');
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${schema}.${GAVE_UP} (only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row), at timestamptz NOT NULL)`,
    );
    await client.query(
      `INSERT INTO ${schema}.${GAVE_UP} (at) VALUES (clock_timestamp()) ON CONFLICT (only_row) DO UPDATE SET at = excluded.at`,
    );
    await client.query('COMMIT');
  } catch {
    // The caller rolls back what is left.
  }
}

/** PostgreSQL's answer for a schema, table or column that is not there: a schema behind, not a database down. */
export function isUndefinedObject(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === '3F000' || code === '42P01' || code === '42703';
}

/** A schema name as a quoted identifier; only plain lower-case names, so no quoting surprises. */
export function quoteSchema(schema: string): string {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) {
    throw new RangeError(`Schema name ${JSON.stringify(schema)} must be lower-case letters, digits and _ (at most 63)`);
  }
  return `"${schema}"`;
}
