import { Body, Controller, Header, Module, Post, type INestApplication } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import type { Redis } from 'ioredis';
import { randomBytes, randomUUID } from 'node:crypto';
import { Registry } from 'prom-client';
import { IdempotencyCoordinator } from '../coordinator';
import { releaseRecord } from '../operator-records';
import { encryptionKeysFromEnv, type AnswerEncryptionOptions } from '../encryption-keys';
import { redisRawRecords } from '../encryption.test-support';
import { RedisStore } from '../redis/redis-store';
import { connect, deleteKeys, uniquePrefix } from '../redis/redis.test-support';
import { IdempotencyModule } from './idempotency.module';
import { Idempotent } from './idempotent.decorator';
import { post, type AdapterName } from './nest.test-support';
import { ProblemDetailsFilter } from './problem-details.filter';

/**
 * Encryption at rest over real HTTP, on Fastify and Express, through
 * `forRoot` and `forRootAsync` (its keyring read from the environment), on
 * a real Redis whose record is read back raw.
 */
const BODY_MARKER = 'BODYMARK-91e0aa';
const HEADER_MARKER = 'HDRMARK-3c55f1';
const KEYS = `k2:${randomBytes(32).toString('base64')},k1:${randomBytes(32).toString('hex')}`;

let runs = 0;

interface EncryptedApp {
  app: INestApplication;
  url: string;
  registry: Registry;
  close(): Promise<void>;
}

@Controller()
class ChargesController {
  @Post('charges')
  @Header('location', `/charges/${HEADER_MARKER}`)
  @Idempotent('test.charge')
  charge(@Body() body: { amountCents: number }) {
    return { chargeId: `ch_${++runs}`, amountCents: body.amountCents, holder: BODY_MARKER, note: 'ünïcode ✓' };
  }
}

async function boot(adapter: AdapterName, registration: 'forRoot' | 'forRootAsync', store: RedisStore): Promise<EncryptedApp> {
  const registry = new Registry();
  const options = (encryption: AnswerEncryptionOptions) => ({
    service: 'test',
    store,
    scope: 'shared' as const,
    metrics: { registry },
    encryption,
  });
  const env = { IDEMPOTENCY_ENCRYPTION_KEYS: KEYS };
  @Module({
    imports: [
      registration === 'forRoot'
        ? IdempotencyModule.forRoot(options({ keys: encryptionKeysFromEnv(undefined, env) }))
        : IdempotencyModule.forRootAsync({ useFactory: async () => options({ keys: encryptionKeysFromEnv(undefined, env) }) }),
    ],
    controllers: [ChargesController],
    providers: [{ provide: APP_FILTER, useClass: ProblemDetailsFilter }],
  })
  class EncryptedModule {}
  const moduleRef = await Test.createTestingModule({ imports: [EncryptedModule] }).compile();
  const app: INestApplication =
    adapter === 'fastify'
      ? moduleRef.createNestApplication(new FastifyAdapter(), { logger: false })
      : moduleRef.createNestApplication({ logger: false });
  await app.listen(0, '127.0.0.1');
  const url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
  return { app, url, registry, close: () => app.close() };
}

describe.each<[AdapterName, 'forRoot' | 'forRootAsync']>([
  ['fastify', 'forRoot'],
  ['fastify', 'forRootAsync'],
  ['express', 'forRoot'],
  ['express', 'forRootAsync'],
])('stored answers encrypted at rest over HTTP (%s, %s)', (adapter, registration) => {
  const prefix = uniquePrefix();
  let client: Redis;
  let store: RedisStore;
  let fixture: EncryptedApp;
  const recordKey = (key: string) => fixture.app.get(IdempotencyCoordinator).recordKey('test.charge', '', key);
  const raw = () => redisRawRecords(client, prefix);

  beforeAll(async () => {
    client = await connect();
    store = new RedisStore({ client, prefix });
    fixture = await boot(adapter, registration, store);
  });
  afterAll(async () => {
    await fixture.close();
    await store.close();
    await deleteKeys(client, prefix);
    await client.quit();
  });

  it('stores status, headers and body encrypted under the newest key, and replays them byte for byte', async () => {
    const key = `k-${randomUUID()}`;
    const before = runs;
    const first = await post(fixture, '/charges', { amountCents: 500 }, { 'idempotency-key': key });
    expect(first.status).toBe(201);
    expect(first.json).toMatchObject({ holder: BODY_MARKER });
    expect(first.headers.get('location')).toBe(`/charges/${HEADER_MARKER}`);

    const record = await raw().read(recordKey(key));
    expect(record).toMatchObject({ status: 'completed', result: expect.stringMatching(/^enc2:k2:/) });
    const text = JSON.stringify(record);
    for (const secret of [BODY_MARKER, HEADER_MARKER, 'ünïcode', '"status":201', 'application/json']) expect(text).not.toContain(secret);

    const replay = await post(fixture, '/charges', { amountCents: 500 }, { 'idempotency-key': key });
    expect(replay.status).toBe(201);
    expect(replay.text).toBe(first.text);
    expect(replay.headers.get('location')).toBe(first.headers.get('location'));
    expect(replay.headers.get('content-type')).toBe(first.headers.get('content-type'));
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(runs).toBe(before + 1);
  });

  it('answers a tampered stored answer 500 stored-answer-unreadable, never replays it and never runs the handler again', async () => {
    const key = `k-${randomUUID()}`;
    const before = runs;
    await post(fixture, '/charges', { amountCents: 700 }, { 'idempotency-key': key });
    const sealed = await raw().readResult(recordKey(key));
    const bytes = Buffer.from(sealed.slice('enc2:k2:'.length), 'base64');
    bytes[bytes.length - 1] = (bytes[bytes.length - 1] as number) ^ 0xff;
    await raw().writeResult(recordKey(key), `enc2:k2:${bytes.toString('base64')}`);
    // Another process, so the answer this one already knows is not the one it replays.
    const other = await boot(adapter, registration, store);
    try {
      const retry = await post(other, '/charges', { amountCents: 700 }, { 'idempotency-key': key });
      expect(retry.status).toBe(500);
      expect(retry.headers.get('content-type')).toContain('application/problem+json');
      expect(retry.json).toMatchObject({ type: 'urn:idempotency-chain:problem:stored-answer-unreadable', status: 500 });
      expect(retry.text).not.toContain(BODY_MARKER);
      expect(retry.headers.get('idempotent-replayed')).toBeNull();
      expect(runs).toBe(before + 1);
      expect(await other.registry.metrics()).toContain(
        'idempotency_events_total{service="test",operation="test.charge",outcome="unreadable"} 1',
      );
    } finally {
      await other.close();
    }
  });

  it("answers the same record's earlier answer, to another body, put back 500 stored-answer-unreadable, never that body's answer", async () => {
    const key = `k-${randomUUID()}`;
    const before = runs;
    const first = await post(fixture, '/charges', { amountCents: 500 }, { 'idempotency-key': key });
    expect(first.status).toBe(201);
    const earlier = await raw().readResult(recordKey(key));
    // The record ends (its retention runs out; here an operator's forced release), and the key is used with another body.
    expect((await releaseRecord(store, { recordKey: recordKey(key) }, { force: true })).outcome).toBe('forced');
    const second = await post(fixture, '/charges', { amountCents: 900 }, { 'idempotency-key': key });
    expect(second.status).toBe(201);
    expect(second.json).toMatchObject({ amountCents: 900 });
    expect(runs).toBe(before + 2);

    await raw().writeResult(recordKey(key), earlier);
    // Another process, so the answer this one already knows is not the one it replays.
    const other = await boot(adapter, registration, store);
    try {
      const retry = await post(other, '/charges', { amountCents: 900 }, { 'idempotency-key': key });
      expect(retry.status).toBe(500);
      expect(retry.json).toMatchObject({ type: 'urn:idempotency-chain:problem:stored-answer-unreadable', status: 500 });
      expect(retry.text).not.toContain(first.json.chargeId);
      expect(retry.text).not.toContain(BODY_MARKER);
      expect(retry.headers.get('idempotent-replayed')).toBeNull();
      expect(runs).toBe(before + 2);
    } finally {
      await other.close();
    }
  });
});
