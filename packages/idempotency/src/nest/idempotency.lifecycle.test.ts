import { Test } from '@nestjs/testing';
import type { LoggerService } from '@nestjs/common';
import { HealthCheckService, TerminusModule } from '@nestjs/terminus';
import { IdempotencyCoordinator } from '../coordinator';
import { StoreUnavailableError } from '../errors';
import { MemoryStore } from '../memory-store';
import { createRedisClient, RedisStore } from '../redis';
import { deleteKeys, REDIS_URL, uniquePrefix } from '../redis/redis.test-support';
import type { IdempotencyStore } from '../store';
import { startPrivateRedis } from '../../test/support/redis';
import { DATABASE_URL } from '../../test/support/postgres';
import { startTcpProxy, type TcpProxy } from '../../test/support/tcp-proxy';
import { createPostgresPool, PostgresStore } from '../postgres';
import { MIGRATIONS } from '../postgres/migrations';
import { randomBytes } from 'node:crypto';
import { IdempotencyHealthIndicator } from './idempotency-health.indicator';
import { IdempotencyModule } from './idempotency.module';

/** Boot the module alone around `store`, beside terminus; the warnings it logs are collected. */
async function boot(store: IdempotencyStore) {
  const warnings: string[] = [];
  const logger: LoggerService = { log: () => undefined, error: () => undefined, warn: (message: string) => warnings.push(message) };
  const moduleRef = await Test.createTestingModule({
    imports: [
      IdempotencyModule.forRoot({ service: 'lifecycle', store, scope: 'shared', metrics: false, closeStore: true }),
      TerminusModule,
    ],
  }).compile();
  const app = await moduleRef.createNestApplication({ logger }).init();
  const health = app.get(IdempotencyHealthIndicator);
  // What a /health route answers: terminus's own summary of the indicator.
  const check = () =>
    app
      .get(HealthCheckService)
      .check([() => health.isHealthy()])
      .catch((error: { response: unknown }) => error.response);
  return { app, warnings, health, check, coordinator: app.get(IdempotencyCoordinator) };
}

const run = (coordinator: IdempotencyCoordinator, key = `k-${Math.random()}`) =>
  coordinator.run({ operation: 'op', key, fingerprint: 'f' }, async () => 'done');

/** What a service whose store did not answer at boot shows: the warning, requests refused 503, health down. */
async function expectFailingClosed({ warnings, coordinator, check }: Awaited<ReturnType<typeof boot>>): Promise<void> {
  expect(warnings).toEqual([expect.stringContaining('lifecycle: the idempotency store did not answer at boot')]);
  await expect(run(coordinator)).rejects.toBeInstanceOf(StoreUnavailableError);
  expect(await check()).toMatchObject({ status: 'error', error: { idempotencyStore: { status: 'down' } } });
}

/** A proxy in front of a shared server, not listening yet: the server is "down" until `start()`. */
async function downProxy(target: string, defaultPort: number): Promise<{ proxy: TcpProxy; url: string }> {
  const url = new URL(target);
  const proxy = await startTcpProxy({ host: url.hostname, port: Number(url.port || defaultPort) });
  await proxy.stop();
  url.hostname = '127.0.0.1';
  url.port = String(proxy.port);
  return { proxy, url: url.toString() };
}

/** Poll the health check until it answers `ok`, within a generous bound. */
async function untilUp(check: () => Promise<unknown>): Promise<unknown> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const result = await check();
    if ((result as { status?: string }).status === 'ok' || Date.now() > deadline) return result;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('IdempotencyModule and the store lifecycle', () => {
  const prefix = uniquePrefix();

  afterAll(async () => {
    const admin = createRedisClient(REDIS_URL);
    await admin.connect();
    await deleteKeys(admin, prefix);
    await admin.quit();
  });

  it('connects a lazy Redis client at boot, so the first request is served rather than refused 503', async () => {
    const client = createRedisClient(REDIS_URL); // lazyConnect: nobody calls client.connect()
    const { app, check, coordinator, warnings } = await boot(new RedisStore({ client, prefix, ownsClient: true }));

    expect(client.status).toBe('ready');
    expect((await run(coordinator)).value).toBe('done');
    expect(await check()).toMatchObject({ status: 'ok', info: { idempotencyStore: { status: 'up' } } });
    expect(warnings).toEqual([]);
    await app.close();
    await expect(client.ping()).rejects.toThrow(); // closeStore: the store quit the client it owns
  });

  it('reports a store that answers but refuses as refusing, not as one that does not answer', async () => {
    // No schema at all: PostgreSQL answers, the store refuses (SchemaVersionError) until migrate() has run.
    const schema = `idem_none_${randomBytes(6).toString('hex')}`;
    const { app, health } = await boot(new PostgresStore({ pool: createPostgresPool(DATABASE_URL, { max: 2 }), schema, ownsPool: true }));
    try {
      expect(await health.isHealthy()).toEqual({
        idempotencyStore: {
          status: 'down',
          message: expect.stringMatching(/^the idempotency store refuses this service: .*run migrate\(\)/),
        },
      });
    } finally {
      await app.close();
    }
  });

  it('reports the store down once it stops answering, under the key asked for', async () => {
    const server = await startPrivateRedis();
    const client = createRedisClient(server.url);
    client.on('error', () => undefined);
    const { app, health } = await boot(new RedisStore({ client, prefix, ownsClient: true }));
    try {
      expect(await health.isHealthy('records')).toEqual({ records: { status: 'up' } });
      await server.stop();
      expect(await health.isHealthy('records')).toEqual({
        records: { status: 'down', message: expect.stringContaining('the idempotency store does not answer') },
      });
    } finally {
      await app.close();
      await server.stop();
    }
  });

  it('boots when the store does not answer, says why, fails closed and reports down', async () => {
    const server = await startPrivateRedis();
    await server.stop(); // nothing listens on its port any more
    const client = createRedisClient(server.url, { retryStrategy: () => null });
    client.on('error', () => undefined);
    const booted = await boot(new RedisStore({ client, prefix, ownsClient: true }));
    await expectFailingClosed(booted);
    await booted.app.close();
  });

  it('PostgreSQL down at boot under migrateOnConnect: fails closed and reports down, then migrates and serves once it is back', async () => {
    const schema = `idem_boot_${randomBytes(6).toString('hex')}`;
    const { proxy, url } = await downProxy(DATABASE_URL, 5432);
    const store = new PostgresStore({ pool: createPostgresPool(url, { max: 4 }), schema, ownsPool: true, migrateOnConnect: true });
    const admin = createPostgresPool(DATABASE_URL, { max: 1 });
    const booted = await boot(store);
    const { app, check, coordinator } = booted;
    try {
      await expectFailingClosed(booted);

      await proxy.start();
      expect(await untilUp(check)).toMatchObject({ status: 'ok', info: { idempotencyStore: { status: 'up' } } });
      const { rows } = await admin.query(`SELECT version FROM "${schema}".idempotency_schema_versions ORDER BY version`);
      // Every migration, applied once the database is back.
      expect(rows.map((row: { version: number }) => row.version)).toEqual(MIGRATIONS.map((migration) => migration.version));
      const first = await run(coordinator, 'after-outage');
      expect(first.value).toBe('done');
      expect((await run(coordinator, 'after-outage')).replayed).toBe(true);
    } finally {
      await app.close();
      await proxy.stop();
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await admin.end();
    }
  });

  it('Redis down at boot: fails closed and reports down, then serves once it is back, as the lazy client reconnects', async () => {
    const { proxy, url } = await downProxy(REDIS_URL, 6379);
    const client = createRedisClient(url);
    client.on('error', () => undefined);
    const booted = await boot(new RedisStore({ client, prefix, ownsClient: true }));
    const { app, check, coordinator } = booted;
    try {
      await expectFailingClosed(booted);

      await proxy.start();
      expect(await untilUp(check)).toMatchObject({ status: 'ok', info: { idempotencyStore: { status: 'up' } } });
      expect((await run(coordinator)).value).toBe('done');
    } finally {
      await app.close();
      await proxy.stop();
    }
  });

  it('gives up on a store that hangs after the timeout, and counts a store without ping() as up', async () => {
    const hanging = Object.assign(new MemoryStore(), { ping: () => new Promise<void>(() => undefined) });
    const { app, health } = await boot(hanging);
    expect(await health.isHealthy('store', 50)).toEqual({
      store: { status: 'down', message: expect.stringContaining('no answer within 50 ms') },
    });
    await app.close();

    const plain = await boot(new MemoryStore());
    expect(await plain.health.isHealthy()).toEqual({ idempotencyStore: { status: 'up' } });
    await plain.app.close();
  });
});
