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

const run = (coordinator: IdempotencyCoordinator) =>
  coordinator.run({ operation: 'op', key: `k-${Math.random()}`, fingerprint: 'f' }, async () => 'done');

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
    const { app, check, coordinator, warnings } = await boot(new RedisStore({ client, prefix, ownsClient: true }));

    expect(warnings).toEqual([expect.stringContaining('lifecycle: the idempotency store did not answer at boot')]);
    await expect(run(coordinator)).rejects.toBeInstanceOf(StoreUnavailableError);
    expect(await check()).toMatchObject({ status: 'error', error: { idempotencyStore: { status: 'down' } } });
    await app.close();
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
