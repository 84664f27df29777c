import { createPostgresPool, migrate, PostgresStore } from '.';
import { MIGRATIONS } from './migrations';
import { DATABASE_URL } from '../../test/support/postgres';
import { startTcpProxy } from '../../test/support/tcp-proxy';
import { randomBytes } from 'node:crypto';
import type { Pool } from 'pg';

let pool: Pool;
const schemas: string[] = [];
const newSchema = () => {
  const schema = `idem_migrate_${randomBytes(6).toString('hex')}`;
  schemas.push(schema);
  return schema;
};
const versions = async (schema: string) =>
  (await pool.query<{ version: number }>(`SELECT version FROM "${schema}".idempotency_schema_versions ORDER BY version`)).rows.map(
    (r) => r.version,
  );

beforeAll(() => {
  pool = createPostgresPool(DATABASE_URL, { max: 6 });
});

afterAll(async () => {
  for (const schema of schemas) await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await pool.end();
});

describe('migrate', () => {
  test('creates the schema and its tables, records every version, and applies nothing the second time', async () => {
    const schema = newSchema();
    expect(await migrate(pool, { schema })).toEqual(MIGRATIONS.map((m) => m.version));
    expect(await versions(schema)).toEqual([1, 2, 3]);
    expect(await migrate(pool, { schema })).toEqual([]);
    const { rows } = await pool.query(`SELECT count(*)::int AS n FROM "${schema}".idempotency_records`);
    expect(rows[0].n).toBe(0);
  });

  test('two concurrent callers take turns under the advisory lock: one applies, the other finds the work done', async () => {
    const schema = newSchema();
    const results = await Promise.all([migrate(pool, { schema }), migrate(pool, { schema }), migrate(pool, { schema })]);
    expect(results.map((done) => done.length).sort()).toEqual([0, 0, MIGRATIONS.length]);
    expect(await versions(schema)).toEqual([1, 2, 3]);
  });

  test('applies only the versions not yet recorded, in order', async () => {
    const schema = newSchema();
    await migrate(pool, { schema });
    const extra = [
      ...MIGRATIONS,
      { version: 5, name: 'c', sql: (s: string) => `CREATE TABLE ${s}.c (id int)` },
      { version: 4, name: 'b', sql: (s: string) => `CREATE TABLE ${s}.b (id int)` },
    ];
    expect(await migrate(pool, { schema, migrations: extra })).toEqual([4, 5]);
    expect(await versions(schema)).toEqual([1, 2, 3, 4, 5]);
  });

  test('a failing migration rolls back everything the call applied', async () => {
    const schema = newSchema();
    await migrate(pool, { schema });
    const broken = [
      ...MIGRATIONS,
      { version: 4, name: 'ok', sql: (s: string) => `CREATE TABLE ${s}.two (id int)` },
      { version: 5, name: 'bad', sql: () => 'SELECT * FROM no_such_table' },
    ];
    await expect(migrate(pool, { schema, migrations: broken })).rejects.toThrow('no_such_table');
    expect(await versions(schema)).toEqual([1, 2, 3]);
    const { rows } = await pool.query(`SELECT to_regclass('"${schema}".two') AS t`);
    expect(rows[0].t).toBeNull();
  });

  test("runs from a store's connect() under migrateOnConnect, and only then", async () => {
    const schema = newSchema();
    const plain = new PostgresStore({ pool, schema, sweepIntervalMs: 0 });
    await expect(plain.connect()).rejects.toMatchObject({ name: 'SchemaVersionError', foundVersion: 0 });
    expect((await pool.query(`SELECT to_regnamespace('"${schema}"') AS s`)).rows[0].s).toBeNull();
    const migrating = new PostgresStore({ pool, schema, sweepIntervalMs: 0, migrateOnConnect: true });
    await migrating.connect();
    await migrating.connect();
    expect(await versions(schema)).toEqual([1, 2, 3]);
    await Promise.all([plain.close(), migrating.close()]);
  });

  test('under migrateOnConnect, a store whose database was down at connect() migrates before its next operation once it is back', async () => {
    const schema = newSchema();
    const url = new URL(DATABASE_URL);
    const proxy = await startTcpProxy({ host: url.hostname, port: Number(url.port || 5432) });
    await proxy.stop();
    url.hostname = '127.0.0.1';
    url.port = String(proxy.port);
    const proxied = createPostgresPool(url.toString(), { max: 4 });
    const store = new PostgresStore({ pool: proxied, schema, sweepIntervalMs: 0, migrateOnConnect: true });
    const claim = (n: number) => store.claim({ recordKey: `r-${n}`, fingerprint: 'f', owner: `o-${n}`, leaseMs: 30_000 });
    try {
      await expect(store.connect()).rejects.toThrow('ECONNREFUSED');
      await expect(claim(0)).rejects.toThrow('ECONNREFUSED');
      await expect(store.ping()).rejects.toThrow('ECONNREFUSED');
      await proxy.start();
      // Concurrent first operations share one migration, then each runs.
      const claims = await Promise.all([1, 2, 3, 4].map(claim));
      expect(claims.map((c) => c.status)).toEqual(['claimed', 'claimed', 'claimed', 'claimed']);
      expect(await versions(schema)).toEqual([1, 2, 3]);
      await expect(store.ping()).resolves.toBeUndefined();
      expect(await store.complete('r-1', 'o-1', 'done', 60_000)).toBe(true);
      expect(await claim(1)).toMatchObject({ status: 'completed', result: 'done' });
    } finally {
      await store.close();
      await proxied.end();
      await proxy.stop();
    }
  });

  test('gives up on a table lock it would wait for past lockTimeoutMs, changing nothing, and applies once the lock is free', async () => {
    const schema = newSchema();
    await migrate(pool, { schema, migrations: MIGRATIONS.slice(0, 1) });
    const holder = await pool.connect();
    try {
      // An open transaction that read the table holds a lock the ALTER of migration 2 must wait for.
      await holder.query('BEGIN');
      await holder.query(`SELECT count(*) FROM "${schema}".idempotency_records`);
      await expect(migrate(pool, { schema, lockTimeoutMs: 100 })).rejects.toMatchObject({ code: '55P03' });
      expect(await versions(schema)).toEqual([1]);
      await holder.query('COMMIT');
    } finally {
      holder.release();
    }
    expect(await migrate(pool, { schema, lockTimeoutMs: 100 })).toEqual([2, 3]);
  });

  test('a caller that waited its turn behind one that gave up on the table lock gives up too, without waiting for it again', async () => {
    const schema = newSchema();
    await migrate(pool, { schema, migrations: MIGRATIONS.slice(0, 1) });
    const holder = await pool.connect();
    try {
      await holder.query('BEGIN');
      await holder.query(`SELECT count(*) FROM "${schema}".idempotency_records`);
      const outcomes = await Promise.allSettled([
        migrate(pool, { schema, lockTimeoutMs: 200 }),
        migrate(pool, { schema, lockTimeoutMs: 200 }),
      ]);
      const reasons = outcomes.map((outcome) =>
        outcome.status === 'rejected' ? (outcome.reason as { code?: string; message: string }) : undefined,
      );
      expect(reasons.map((reason) => reason?.code ?? reason?.message).sort()).toEqual([
        '55P03',
        expect.stringContaining("ended just before this one's turn without applying it"),
      ]);
      expect(await versions(schema)).toEqual([1]);
      await holder.query('COMMIT');
    } finally {
      holder.release();
    }
    expect(await migrate(pool, { schema, lockTimeoutMs: 200 })).toEqual([2, 3]);
  });

  test('refuses a lockTimeoutMs that is not a positive integer', async () => {
    for (const lockTimeoutMs of [0, -1, 1.5, Number.NaN]) {
      await expect(migrate(pool, { schema: newSchema(), lockTimeoutMs })).rejects.toThrow(RangeError);
    }
  });

  test('refuses a schema name that would need quoting', async () => {
    await expect(migrate(pool, { schema: 'Bad"; DROP' })).rejects.toThrow(RangeError);
  });
});
