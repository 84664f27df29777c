import { randomBytes } from 'node:crypto';
import type { Pool } from 'pg';
import { createPostgresPool, migrate, PostgresStore } from '.';
import { MIGRATIONS, SCHEMA_VERSION } from './migrations';

/** Every migration but the newest: a schema one migration behind this release. */
const BEHIND = MIGRATIONS.slice(0, -1);
import { charge, expectChargedOnce, expectFailsOpen, failOpen } from '../../test/support/fail-open';
import { DATABASE_URL } from '../../test/support/postgres';

// A store whose database answers but whose schema is behind this release must refuse, never run a request
// unprotected: fail-open is for a store that cannot be reached, and this one would let every request through.
let pool: Pool;
const schemas: string[] = [];
const newSchema = () => {
  const schema = `idem_schema_${randomBytes(6).toString('hex')}`;
  schemas.push(schema);
  return schema;
};

beforeAll(() => {
  pool = createPostgresPool(DATABASE_URL, { max: 6 });
});

afterAll(async () => {
  for (const schema of schemas) await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await pool.end();
});

const roles: string[] = [];
const rolePools: Pool[] = [];
afterAll(async () => {
  for (const appPool of rolePools) await appPool.end();
  for (const role of roles) {
    await pool.query(`DROP OWNED BY "${role}"`);
    await pool.query(`DROP ROLE "${role}"`);
  }
});

/** A role of its own (`CREATE ROLE` options `login`), and a pool that connects as it; both gone after the file. */
const newRole = async (login = 'LOGIN') => {
  const role = `idem_role_${randomBytes(6).toString('hex')}`;
  await pool.query(`CREATE ROLE "${role}" ${login}`);
  roles.push(role);
  const url = new URL(DATABASE_URL);
  url.username = role;
  const appPool = createPostgresPool(url.toString(), { max: 2 });
  rolePools.push(appPool);
  return { role, appPool };
};

/** What a DBA grants an application role: the store's table, nothing else (the migrator owns the schema). */
const grantRecords = async (schema: string, role: string) => {
  await pool.query(`GRANT USAGE ON SCHEMA "${schema}" TO "${role}"`);
  await pool.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON "${schema}".idempotency_records TO "${role}"`);
};

describe('PostgresStore on a schema behind this release', () => {
  test('a schema one migration behind: ping is down, a fail-open request is refused and not run, until migrate()', async () => {
    const schema = newSchema();
    await migrate(pool, { schema, migrations: BEHIND });
    const store = new PostgresStore({ pool, schema, sweepIntervalMs: 0 });
    const ran: string[] = [];
    try {
      const behind = {
        name: 'SchemaVersionError',
        schema,
        foundVersion: SCHEMA_VERSION - 1,
        requiredVersion: SCHEMA_VERSION,
        httpStatus: 500,
      };
      await expect(store.ping()).rejects.toMatchObject(behind);
      await expect(charge(failOpen(store), ran, 'k1')).rejects.toMatchObject(behind);
      await expect(store.ping()).rejects.toThrow(
        `schema "${schema}" is at migration ${SCHEMA_VERSION - 1}, but this library needs ${SCHEMA_VERSION}: run migrate()`,
      );
      expect(ran).toEqual([]);

      await migrate(pool, { schema });
      await expect(store.ping()).resolves.toBeUndefined();
      await expect(charge(failOpen(store), ran, 'k1')).resolves.toMatchObject({ value: 'charged' });
      expect(ran).toEqual(['k1']);
    } finally {
      await store.close();
    }
  });

  test('no schema at all: found version 0, nothing created, nothing run', async () => {
    const schema = newSchema();
    const store = new PostgresStore({ pool, schema, sweepIntervalMs: 0 });
    const ran: string[] = [];
    try {
      await expect(store.connect()).rejects.toMatchObject({ name: 'SchemaVersionError', foundVersion: 0 });
      await expect(charge(failOpen(store), ran, 'k1')).rejects.toMatchObject({ name: 'SchemaVersionError' });
      expect(ran).toEqual([]);
      expect((await pool.query(`SELECT to_regnamespace('"${schema}"') AS s`)).rows[0].s).toBeNull();
    } finally {
      await store.close();
    }
  });

  test('a table dropped after the check: the claim is refused as a schema error, not failed open', async () => {
    const schema = newSchema();
    await migrate(pool, { schema });
    const store = new PostgresStore({ pool, schema, sweepIntervalMs: 0 });
    const ran: string[] = [];
    try {
      const coordinator = failOpen(store);
      await expect(charge(coordinator, ran, 'k1')).resolves.toMatchObject({ value: 'charged' });
      await pool.query(`DROP TABLE "${schema}".idempotency_records`);
      await expect(charge(coordinator, ran, 'k2')).rejects.toMatchObject({ name: 'SchemaVersionError', foundVersion: SCHEMA_VERSION });
      expect(ran).toEqual(['k1']);
    } finally {
      await store.close();
    }
  });

  test('under migrateOnConnect, a migration that gives up on its table lock leaves the schema behind: refused, not failed open', async () => {
    const schema = newSchema();
    await migrate(pool, { schema, migrations: BEHIND });
    const holder = await pool.connect();
    const store = new PostgresStore({ pool, schema, sweepIntervalMs: 0, migrateOnConnect: true });
    const ran: string[] = [];
    try {
      // A transaction open on the table (a report, a backup, another replica's transactional completion): the
      // ALTER of migration 2 waits for it past lockTimeoutMs and gives up.
      await holder.query('BEGIN');
      await holder.query(`SELECT count(*) FROM "${schema}".idempotency_records`);
      const behind = {
        name: 'SchemaVersionError',
        schema,
        foundVersion: SCHEMA_VERSION - 1,
        requiredVersion: SCHEMA_VERSION,
        cause: { code: '55P03' },
      };
      await expect(charge(failOpen(store), ran, 'k1')).rejects.toMatchObject(behind);
      await expect(store.ping()).rejects.toMatchObject({ name: 'SchemaVersionError', foundVersion: SCHEMA_VERSION - 1 });
      expect(ran).toEqual([]);
      await holder.query('COMMIT');
      // The lock is free, but the next attempt waits 30 s: each one holds every query of the table up.
      await expect(charge(failOpen(store), ran, 'k1')).rejects.toMatchObject({
        name: 'SchemaVersionError',
        foundVersion: SCHEMA_VERSION - 1,
      });
      // 30 s later, for this replica and for the note every replica backs off from.
      await pool.query(`UPDATE "${schema}".idempotency_migration_gave_up SET at = at - interval '30.001 seconds'`);
      const now = Date.now();
      const later = vi.spyOn(Date, 'now').mockImplementation(() => now + 30_001);
      try {
        await expect(charge(failOpen(store), ran, 'k1')).resolves.toMatchObject({ value: 'charged' });
      } finally {
        later.mockRestore();
      }
      expect(ran).toEqual(['k1']);
    } finally {
      holder.release();
      await store.close();
    }
  });

  test('under migrateOnConnect, a migration that cannot get its table lock holds the other queries of the table up once, not on every request', async () => {
    const schema = newSchema();
    await migrate(pool, { schema, migrations: BEHIND });
    const [holder, earlier] = [await pool.connect(), await pool.connect()];
    const store = new PostgresStore({ pool, schema, sweepIntervalMs: 0, migrateOnConnect: true });
    const stalls: number[] = [];
    let stop = false;
    // This release's requests and health checks, back to back.
    const requests = (async () => {
      while (!stop) await store.ping().catch(() => undefined);
    })();
    try {
      await holder.query('BEGIN');
      await holder.query(`SELECT count(*) FROM "${schema}".idempotency_records`);
      // The release still serving traffic reads its records: held up behind a waiting ALTER, for lockTimeoutMs (3 s).
      const until = Date.now() + 7_000;
      while (Date.now() < until) {
        const started = Date.now();
        await earlier.query(`SELECT count(*) FROM "${schema}".idempotency_records`);
        if (Date.now() - started > 1_000) stalls.push(Date.now() - started);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    } finally {
      stop = true;
      await requests;
      await holder.query('ROLLBACK');
      holder.release();
      earlier.release();
      await store.close();
    }
    expect(stalls.length).toBeLessThanOrEqual(1);
  });

  test('under migrateOnConnect, replicas that try one after another back off together: the table is held up once per 30 s, not once each', async () => {
    const schema = newSchema();
    await migrate(pool, { schema, migrations: BEHIND });
    const holder = await pool.connect();
    // Two replicas of the new release, each with its own pool, as separate processes have; their first requests
    // arrive one after the other (not together, which the advisory lock already folds into one wait).
    const pools = [1, 2].map(() => createPostgresPool(DATABASE_URL, { max: 2 }));
    const [first, second] = pools.map(
      (replicaPool) => new PostgresStore({ pool: replicaPool, schema, sweepIntervalMs: 0, migrateOnConnect: true }),
    );
    const ran: string[] = [];
    try {
      await holder.query('BEGIN');
      await holder.query(`SELECT count(*) FROM "${schema}".idempotency_records`);
      // The first replica's migration waits for the table lock for lockTimeoutMs and gives up.
      await expect(charge(failOpen(first as PostgresStore), ran, 'k1')).rejects.toMatchObject({
        name: 'SchemaVersionError',
        cause: { code: '55P03' },
      });
      // The second one does not wait for the table again: it backs off from the first one's attempt.
      await expect(charge(failOpen(second as PostgresStore), ran, 'k2')).rejects.toMatchObject({
        name: 'SchemaVersionError',
        foundVersion: SCHEMA_VERSION - 1,
        cause: { message: expect.stringMatching(/gave up on its table lock \d+ ms ago/) },
      });
      expect(ran).toEqual([]);
      await holder.query('COMMIT');
      // An operator's own migrate() does not back off.
      expect(await migrate(pool, { schema })).toEqual([SCHEMA_VERSION]);
    } finally {
      holder.release();
      for (const store of [first, second]) await store?.close();
      for (const replicaPool of pools) await replicaPool.end();
    }
  });

  test('under migrateOnConnect, replicas that boot together hold the other queries of the table up once, not once each', async () => {
    const schema = newSchema();
    await migrate(pool, { schema, migrations: BEHIND });
    const [holder, earlier] = [await pool.connect(), await pool.connect()];
    // Four replicas of the new release, each with its own pool, as separate processes have.
    const pools = [1, 2, 3, 4].map(() => createPostgresPool(DATABASE_URL, { max: 2 }));
    const stores = pools.map((replicaPool) => new PostgresStore({ pool: replicaPool, schema, sweepIntervalMs: 0, migrateOnConnect: true }));
    const stalls: number[] = [];
    let stop = false;
    // The transaction is open before the replicas boot, so each of them finds the table locked.
    await holder.query('BEGIN');
    await holder.query(`SELECT count(*) FROM "${schema}".idempotency_records`);
    const requests = stores.map(async (store) => {
      while (!stop) await store.ping().catch(() => undefined);
    });
    try {
      // One attempt holds the release still serving traffic up for lockTimeoutMs (3 s); one per replica, back to
      // back, would hold it up 12 s in a row.
      const until = Date.now() + 9_000;
      while (Date.now() < until) {
        const started = Date.now();
        await earlier.query(`SELECT count(*) FROM "${schema}".idempotency_records`);
        if (Date.now() - started > 1_000) stalls.push(Date.now() - started);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    } finally {
      stop = true;
      await Promise.all(requests);
      await holder.query('ROLLBACK');
      holder.release();
      earlier.release();
      for (const store of stores) await store.close();
      for (const replicaPool of pools) await replicaPool.end();
    }
    expect(stalls.length).toBe(1);
    expect((await pool.query(`SELECT version FROM "${schema}".idempotency_schema_versions ORDER BY version`)).rows).toEqual(
      BEHIND.map(({ version }) => ({ version })),
    );
  });

  test('a role that may use the records but not read the versions table: served at this release, refused behind it', async () => {
    const schema = newSchema();
    await migrate(pool, { schema, migrations: BEHIND });
    const { role, appPool } = await newRole();
    await grantRecords(schema, role);
    const store = new PostgresStore({ pool: appPool, schema, sweepIntervalMs: 0 });
    const ran: string[] = [];
    try {
      await expect(store.ping()).rejects.toMatchObject({ name: 'SchemaVersionError', foundVersion: 0, requiredVersion: SCHEMA_VERSION });
      await expect(charge(failOpen(store), ran, 'k1')).rejects.toMatchObject({ name: 'SchemaVersionError' });
      expect(ran).toEqual([]);

      await migrate(pool, { schema });
      await expect(store.ping()).resolves.toBeUndefined();
      await expectChargedOnce(failOpen(store), ran, 'k1');
      expect(ran).toEqual(['k1']);
    } finally {
      await store.close();
    }
  });

  test('under migrateOnConnect, a role that may use the records but not run DDL is served on a schema at this release', async () => {
    const schema = newSchema();
    await migrate(pool, { schema });
    // The apps' stores migrate on connect; a DBA gives the application role the store's table alone, and the
    // migrator has brought the schema up to date. Every migration begins with CREATE SCHEMA IF NOT EXISTS,
    // which such a role may not run (permission denied for database) even when there is nothing to migrate.
    const { role, appPool } = await newRole();
    await grantRecords(schema, role);
    const store = new PostgresStore({ pool: appPool, schema, sweepIntervalMs: 0, migrateOnConnect: true });
    const ran: string[] = [];
    try {
      await expect(migrate(appPool, { schema })).rejects.toMatchObject({ code: '42501' });
      await expect(store.ping()).resolves.toBeUndefined();
      await expectChargedOnce(failOpen(store), ran, 'k1');
      expect(ran).toEqual(['k1']);
    } finally {
      await store.close();
    }
  });

  test('a database that does not answer is still an outage: fail-open runs the request unprotected', async () => {
    const down = createPostgresPool('postgres://postgres@127.0.0.1:1/postgres', { max: 1 });
    const store = new PostgresStore({ pool: down, schema: newSchema(), sweepIntervalMs: 0 });
    try {
      await expectFailsOpen(store);
    } finally {
      await store.close();
      await down.end();
    }
  });
});

describe('PostgresStore with a role the database refuses', () => {
  /** The SQLSTATEs of the statements run on `appPool` that failed. */
  const failedStatements = (appPool: Pool) => {
    const failed: string[] = [];
    const query = appPool.query.bind(appPool) as (...args: unknown[]) => Promise<unknown>;
    const watched = (...args: unknown[]): Promise<unknown> => {
      const result = query(...args);
      result.catch((error: { code?: string }) => failed.push(error.code ?? 'none'));
      return result;
    };
    appPool.query = watched as Pool['query'];
    return failed;
  };

  test('a role that may read the versions but not use the records: ping is down naming the GRANT, fail-open charges are refused', async () => {
    const schema = newSchema();
    await migrate(pool, { schema });
    const { role, appPool } = await newRole();
    // The table recreated by the migrator, the app role's grant on it lost.
    await pool.query(`GRANT USAGE ON SCHEMA "${schema}" TO "${role}"`);
    await pool.query(`GRANT SELECT ON "${schema}".idempotency_schema_versions TO "${role}"`);
    const store = new PostgresStore({ pool: appPool, schema, sweepIntervalMs: 0 });
    const failed = failedStatements(appPool);
    const ran: string[] = [];
    // DELETE is for sweeping, which this store (sweepIntervalMs 0) leaves to another job.
    const grant = `GRANT SELECT, INSERT, UPDATE ON "${schema}".idempotency_records TO "${role}"`;
    try {
      await expect(store.ping()).rejects.toMatchObject({ name: 'StoreRefusedError', httpStatus: 500 });
      await expect(store.ping()).rejects.toThrow(grant);
      const coordinator = failOpen(store);
      for (let attempt = 0; attempt < 3; attempt += 1) {
        await expect(charge(coordinator, ran, 'order-42')).rejects.toMatchObject({ name: 'StoreRefusedError' });
      }
      expect(ran).toEqual([]);
      // Asked of the catalogs: no statement the server refused, nothing in its log.
      expect(failed).toEqual([]);

      await pool.query(grant);
      await expect(store.ping()).resolves.toBeUndefined();
      await expectChargedOnce(coordinator, ran, 'order-42');
      expect(ran).toEqual(['order-42']);
    } finally {
      await store.close();
    }
  });

  test('a grant revoked while the store serves: the claim and the completion are refused, never failed open', async () => {
    const schema = newSchema();
    await migrate(pool, { schema });
    const { role, appPool } = await newRole();
    await grantRecords(schema, role);
    const store = new PostgresStore({ pool: appPool, schema, sweepIntervalMs: 0 });
    const ran: string[] = [];
    try {
      const coordinator = failOpen(store);
      await expect(charge(coordinator, ran, 'k1')).resolves.toMatchObject({ value: 'charged' });
      const held = await store.claim({ recordKey: 'held', fingerprint: 'f', owner: 'o', leaseMs: 30_000 });
      expect(held.status).toBe('claimed');

      await pool.query(`REVOKE UPDATE ON "${schema}".idempotency_records FROM "${role}"`);
      const refused = { name: 'StoreRefusedError', cause: { code: '42501' } };
      await expect(store.complete('held', 'o', 'r', 60_000)).rejects.toMatchObject(refused);
      await expect(store.complete('held', 'o', 'r', 60_000)).rejects.toThrow(
        `GRANT UPDATE ON "${schema}".idempotency_records TO "${role}"`,
      );
      await expect(charge(coordinator, ran, 'k2')).rejects.toMatchObject({ name: 'StoreRefusedError' });
      await expect(store.ping()).rejects.toThrow(`it lacks UPDATE on its table`);
      expect(ran).toEqual(['k1']);
    } finally {
      await store.close();
    }
  });

  test('a role without USAGE on the schema: ping names GRANT USAGE, the claim is refused', async () => {
    const schema = newSchema();
    await migrate(pool, { schema });
    const { role, appPool } = await newRole();
    await pool.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON "${schema}".idempotency_records TO "${role}"`);
    const store = new PostgresStore({ pool: appPool, schema, sweepIntervalMs: 0 });
    const ran: string[] = [];
    try {
      await expect(store.ping()).rejects.toThrow(`GRANT USAGE ON SCHEMA "${schema}" TO "${role}"`);
      await expect(charge(failOpen(store), ran, 'k1')).rejects.toMatchObject({ name: 'StoreRefusedError' });
      expect(ran).toEqual([]);
    } finally {
      await store.close();
    }
  });

  test('the least-privilege role (the records table alone) pings without a statement the server refuses', async () => {
    const schema = newSchema();
    await migrate(pool, { schema });
    const { role, appPool } = await newRole();
    await grantRecords(schema, role);
    const store = new PostgresStore({ pool: appPool, schema, sweepIntervalMs: 0 });
    const failed = failedStatements(appPool);
    try {
      for (let ping = 0; ping < 5; ping += 1) await expect(store.ping()).resolves.toBeUndefined();
      expect(failed).toEqual([]);
    } finally {
      await store.close();
    }
  });

  test('a login the server refuses (a role that may not log in) is refused, not an outage', async () => {
    const schema = newSchema();
    await migrate(pool, { schema });
    const { appPool } = await newRole('NOLOGIN');
    const store = new PostgresStore({ pool: appPool, schema, sweepIntervalMs: 0 });
    const ran: string[] = [];
    try {
      const refused = { name: 'StoreRefusedError', cause: { code: '28000' } };
      await expect(store.ping()).rejects.toMatchObject(refused);
      await expect(store.ping()).rejects.toThrow("check the pool's user, password, database and pg_hba.conf");
      await expect(charge(failOpen(store), ran, 'k1')).rejects.toMatchObject(refused);
      expect(ran).toEqual([]);
    } finally {
      await store.close();
    }
  });
});

describe('PostgresStore with a role granted column by column', () => {
  test('column-level grants that let every statement run: ping is up and a charge runs once', async () => {
    const schema = newSchema();
    await migrate(pool, { schema });
    const { role, appPool } = await newRole();
    const columns = (
      await pool.query<{ c: string }>(
        `SELECT attname::text AS c FROM pg_attribute WHERE attrelid = '"${schema}".idempotency_records'::regclass AND attnum > 0 AND NOT attisdropped`,
      )
    ).rows
      .map((row) => `"${row.c}"`)
      .join(', ');
    await pool.query(`GRANT USAGE ON SCHEMA "${schema}" TO "${role}"`);
    await pool.query(`GRANT SELECT (${columns}), INSERT (${columns}), UPDATE (${columns}) ON "${schema}".idempotency_records TO "${role}"`);
    await pool.query(`GRANT DELETE ON "${schema}".idempotency_records TO "${role}"`);
    const store = new PostgresStore({ pool: appPool, schema, sweepIntervalMs: 0 });
    try {
      await expect(store.ping()).resolves.toBeUndefined();
      await expectChargedOnce(failOpen(store), [], 'column-grants');
      // One column short of what the statements name is still refused.
      await pool.query(`REVOKE SELECT (result) ON "${schema}".idempotency_records FROM "${role}"`);
      await expect(store.ping()).rejects.toThrow(`it lacks SELECT on its table`);
    } finally {
      await store.close();
    }
  });
});

describe('PostgresStore whose rows another job sweeps', () => {
  test('a role without DELETE, the store not sweeping (sweepIntervalMs 0): ping is up and a charge runs once', async () => {
    const schema = newSchema();
    await migrate(pool, { schema });
    const { role, appPool } = await newRole();
    await pool.query(`GRANT USAGE ON SCHEMA "${schema}" TO "${role}"`);
    await pool.query(`GRANT SELECT, INSERT, UPDATE ON "${schema}".idempotency_records TO "${role}"`);
    const store = new PostgresStore({ pool: appPool, schema, sweepIntervalMs: 0 });
    const sweeping = new PostgresStore({ pool: appPool, schema });
    try {
      await expect(store.ping()).resolves.toBeUndefined();
      await expectChargedOnce(failOpen(store), [], 'swept-elsewhere');
      // Sweeping is what needs DELETE: a store that sweeps itself is refused without it, and so is a sweep called.
      await expect(sweeping.ping()).rejects.toThrow(`GRANT DELETE ON "${schema}".idempotency_records TO "${role}"`);
      await expect(store.sweep()).rejects.toMatchObject({ name: 'StoreRefusedError', cause: { code: '42501' } });
    } finally {
      await sweeping.close();
      await store.close();
    }
  });
});
