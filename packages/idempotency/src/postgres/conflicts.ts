import type { Pool, QueryResult, QueryResultRow } from 'pg';

/**
 * SQLSTATEs of a statement PostgreSQL rolled back because of a concurrent
 * one: `serialization_failure` and `deadlock_detected`. A database whose
 * default isolation is REPEATABLE READ or SERIALIZABLE answers a claim that
 * races another claim, or a completion that races its own lease renewal,
 * with the first; READ COMMITTED (PostgreSQL's default) never does.
 */
const CONFLICTS = new Set(['40001', '40P01']);

/** How many times a statement rolled back by a conflict runs again before the error reaches the caller. */
const MAX_CONFLICT_ATTEMPTS = 10;

/**
 * Run one autocommit statement, and run it again while PostgreSQL rolls it
 * back for a conflict: the rollback undid all of it (a NOTIFY included),
 * and the next run takes a fresh snapshot that sees the statement it raced.
 */
export async function queryRetryingConflicts<R extends QueryResultRow>(
  pool: Pool,
  text: string,
  values: unknown[],
): Promise<QueryResult<R>> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await pool.query<R>(text, values);
    } catch (error) {
      if (attempt >= MAX_CONFLICT_ATTEMPTS || !CONFLICTS.has(String((error as { code?: unknown }).code))) throw error;
    }
  }
}
