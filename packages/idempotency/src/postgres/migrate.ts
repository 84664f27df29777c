import type { Pool } from 'pg';
import { MIGRATIONS, type Migration } from './migrations';

/**
 * Options of {@link migrate}.
 *
 * @public
 */
export interface MigrateOptions {
  /** The schema that holds the store's tables; created if missing. Default `public`. */
  schema?: string;
  /** @internal The migrations to apply (tests); default the package's own. */
  migrations?: readonly Migration[];
}

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
  const client = await pool.connect();
  let failed: Error | undefined;
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`idempotency-chain:migrate:${schema}`]);
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
    const done: number[] = [];
    for (const migration of migrations) {
      if (applied.has(migration.version)) continue;
      await client.query(migration.sql(schema));
      await client.query(`INSERT INTO ${schema}.idempotency_schema_versions (version, name) VALUES ($1, $2)`, [
        migration.version,
        migration.name,
      ]);
      done.push(migration.version);
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

/** A schema name as a quoted identifier; only plain lower-case names, so no quoting surprises. */
export function quoteSchema(schema: string): string {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) {
    throw new RangeError(`Schema name ${JSON.stringify(schema)} must be lower-case letters, digits and _ (at most 63)`);
  }
  return `"${schema}"`;
}
