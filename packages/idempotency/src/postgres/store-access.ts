import type { Pool } from 'pg';
import { isIdempotencyError, StoreRefusedError } from '../errors';
import { RECORD_COLUMNS, SCHEMA_VERSION } from './migrations';

/** The privileges the store's statements need on `idempotency_records`. */
const RECORD_PRIVILEGES = ['SELECT', 'INSERT', 'UPDATE', 'DELETE'] as const;

interface AccessRow {
  role: string;
  schema_found: boolean;
  schema_usage: boolean;
  records_found: boolean;
  select: boolean;
  insert: boolean;
  update: boolean;
  delete: boolean;
  versions_readable: boolean;
  columns: string[];
}

/**
 * Whether the role holds `privilege` on `idempotency_records` (alias `r`):
 * on the table, or, for those PostgreSQL also grants column by column, on
 * every column of it the store's statements name (a role granted
 * `SELECT (store_key, ...)` runs them as well as one granted the table).
 */
function privilege(privilege: (typeof RECORD_PRIVILEGES)[number]): string {
  if (privilege === 'DELETE') return `has_table_privilege(r.oid, 'DELETE')`;
  const columns = RECORD_COLUMNS.map((column) => `'${column}'`).join(', ');
  return (
    `(has_table_privilege(r.oid, '${privilege}') OR (SELECT count(*) = ${RECORD_COLUMNS.length} AND bool_and(has_column_privilege(r.oid, c.attnum, '${privilege}'))` +
    ` FROM pg_catalog.pg_attribute c WHERE c.attrelid = r.oid AND c.attname = ANY (ARRAY[${columns}]) AND NOT c.attisdropped))`
  );
}

/**
 * What the role may do in the schema, from the catalogs and the
 * `has_*_privilege` functions: none of them raises an error (nothing in the
 * server's log on each health check), whatever the role may not do.
 */
const ACCESS = `
  SELECT current_user::text AS role,
         n.oid IS NOT NULL AS schema_found,
         coalesce(has_schema_privilege(n.oid, 'USAGE'), false) AS schema_usage,
         r.oid IS NOT NULL AS records_found,
         ${RECORD_PRIVILEGES.map((p) => `coalesce(${privilege(p)}, false) AS "${p.toLowerCase()}"`).join(',\n         ')},
         coalesce(has_schema_privilege(n.oid, 'USAGE') AND has_table_privilege(v.oid, 'SELECT'), false) AS versions_readable,
         ARRAY(SELECT a.attname::text FROM pg_catalog.pg_attribute a
                WHERE a.attrelid = r.oid AND a.attnum > 0 AND NOT a.attisdropped) AS columns
    FROM (VALUES (1)) AS one (x)
    LEFT JOIN pg_catalog.pg_namespace n ON n.nspname = $1
    LEFT JOIN pg_catalog.pg_class r ON r.relnamespace = n.oid AND r.relname = 'idempotency_records'
    LEFT JOIN pg_catalog.pg_class v ON v.relnamespace = n.oid AND v.relname = 'idempotency_schema_versions'`;

/**
 * The newest migration applied to `schema`, as the store's role may see it,
 * and whether that role may use the store's table.
 *
 * Rejects with `StoreRefusedError` when the server refuses the role's login
 * (SQLSTATE class 28, or a database that does not exist), or the role lacks
 * `USAGE` on the schema or any of SELECT, INSERT, UPDATE on
 * `idempotency_records`, or DELETE when the store `sweeps` on its timer: the message names the GRANT that fixes it. Asked
 * of the catalogs, so that a role without those grants raises no error in
 * the server's log on each `ping()`.
 *
 * Resolves with 0 when there is no schema or no store table in it. A role
 * that may use the records but not read `idempotency_schema_versions`
 * (granted `idempotency_records` alone, the migrator owning the rest) is
 * answered by the records table's columns: {@link SCHEMA_VERSION} when it
 * has every column of it, else 0.
 */
export async function storeAccess(pool: Pool, schema: string, quoted: string, sweeps: boolean): Promise<number> {
  try {
    const { rows } = await pool.query<AccessRow>(ACCESS, [schema]);
    const access = rows[0];
    if (!access) throw new Error('The PostgreSQL catalogs answered no row');
    const refused = missingGrants(access, quoted, sweeps);
    if (refused.length > 0) {
      throw new StoreRefusedError(
        `The PostgreSQL role "${access.role}" may not use the idempotency store in schema ${quoted}: ` +
          `${refused.join('; ')}; requests are refused until then`,
      );
    }
    if (access.versions_readable) {
      const versions = await pool.query<{ version: number }>(
        `SELECT coalesce(max(version), 0)::int AS version FROM ${quoted}.idempotency_schema_versions`,
      );
      return versions.rows[0]?.version ?? 0;
    }
    if (!access.records_found) return 0;
    return RECORD_COLUMNS.every((column) => access.columns.includes(column)) ? SCHEMA_VERSION : 0;
  } catch (error) {
    throw refusedLogin(error) ?? error;
  }
}

/**
 * The GRANTs the role needs and lacks, as statements to run (none when the
 * schema or its table is not there). DELETE only when the store `sweeps`
 * on its own timer: no other statement deletes, so a store whose rows
 * another job sweeps serves without it.
 */
function missingGrants(access: AccessRow, quoted: string, sweeps: boolean): string[] {
  const role = quoteIdentifier(access.role);
  const grants: string[] = [];
  if (access.schema_found && !access.schema_usage) grants.push(`it lacks USAGE on the schema: GRANT USAGE ON SCHEMA ${quoted} TO ${role}`);
  const needed = sweeps ? RECORD_PRIVILEGES : RECORD_PRIVILEGES.filter((privilege) => privilege !== 'DELETE');
  const missing = needed.filter((privilege) => !access[privilege.toLowerCase() as Lowercase<typeof privilege>]);
  if (access.records_found && missing.length > 0) {
    const list = missing.join(', ');
    grants.push(`it lacks ${list} on its table: GRANT ${list} ON ${quoted}.idempotency_records TO ${role}`);
  }
  return grants;
}

/** SQLSTATEs of a server that answers but will not let the role in: class 28, or a database that is not there. */
function isRefusedLogin(code: string): boolean {
  return code.startsWith('28') || code === '3D000';
}

/** `StoreRefusedError` for a login the server refused, else `undefined`. Its message is the server's, which names no password. */
function refusedLogin(error: unknown): StoreRefusedError | undefined {
  const code = sqlState(error);
  if (!isRefusedLogin(code)) return undefined;
  return new StoreRefusedError(
    `The PostgreSQL server refuses the idempotency store's connection (${code}: ${(error as Error).message}): ` +
      `check the pool's user, password, database and pg_hba.conf; requests are refused until then`,
    { cause: error },
  );
}

/**
 * `StoreRefusedError` for a statement the server refused the role (a login,
 * SQLSTATE 42501 insufficient_privilege), else `undefined`. `detail`, when
 * given, is what {@link storeAccess} found since, naming the GRANT.
 */
export function refusal(error: unknown, detail?: unknown): StoreRefusedError | undefined {
  const login = refusedLogin(error);
  if (login) return login;
  if (sqlState(error) !== '42501') return undefined;
  if (isIdempotencyError(detail, StoreRefusedError)) return new StoreRefusedError(detail.message, { cause: error });
  return new StoreRefusedError(
    `The PostgreSQL role may not run an idempotency store statement (${(error as Error).message}): ` +
      `grant it SELECT, INSERT, UPDATE, DELETE on the store's idempotency_records and USAGE on its schema; requests are refused until then`,
    { cause: error },
  );
}

/** Whether PostgreSQL refused the role (see {@link refusal}). */
export function isRefusal(error: unknown): boolean {
  const code = sqlState(error);
  return code === '42501' || isRefusedLogin(code);
}

function sqlState(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : '';
}

/** A role name as a quoted identifier, for a GRANT to copy. */
function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
