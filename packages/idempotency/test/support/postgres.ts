import { randomBytes } from 'node:crypto';
import type { Pool, PoolConfig } from 'pg';
import { createPostgresPool, migrate } from '../../src/postgres';
import { startTcpProxy } from './tcp-proxy';

/**
 * The PostgreSQL the tests use: `DATABASE_URL`, by default the machine's
 * local server (`postgres://postgres@127.0.0.1:5432/postgres`, trust auth).
 * Each test file works in a schema of its own, dropped at the end, so runs
 * never see each other's rows.
 */
export const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export interface TestSchema {
  schema: string;
  /** A pool on the shared server (not owned by any store). */
  pool: Pool;
  /** A pool whose every connection goes through a proxy that `stop()` cuts: an outage of this pool only. */
  proxiedPool(options?: PoolConfig): Promise<{ pool: Pool; stop(): Promise<void> }>;
  /** Drop the schema and end the pool. */
  drop(): Promise<void>;
}

/** A fresh schema with the store's migrations applied. */
export async function createTestSchema(prefix = 'idem_test'): Promise<TestSchema> {
  const schema = `${prefix}_${randomBytes(6).toString('hex')}`;
  const pool = createPostgresPool(DATABASE_URL, { max: 12 });
  try {
    await migrate(pool, { schema });
  } catch (cause) {
    await pool.end();
    throw new Error(
      `The PostgreSQL tests need a server at DATABASE_URL (${DATABASE_URL}): ${cause instanceof Error ? cause.message : String(cause)}. ` +
        'Start it (pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start) or set DATABASE_URL.',
      { cause },
    );
  }
  return {
    schema,
    pool,
    async proxiedPool(options = {}) {
      const url = new URL(DATABASE_URL);
      const proxy = await startTcpProxy({ host: url.hostname, port: Number(url.port || 5432) });
      url.hostname = '127.0.0.1';
      url.port = String(proxy.port);
      return { pool: createPostgresPool(url.toString(), { max: 4, ...options }), stop: () => proxy.stop() };
    },
    async drop() {
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await pool.end();
    },
  };
}
