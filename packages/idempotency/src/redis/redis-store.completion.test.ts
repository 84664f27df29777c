import { once } from 'node:events';
import { connect as connectTcp, createServer, type Socket } from 'node:net';
import type { Redis } from 'ioredis';
import { IdempotencyCoordinator } from '../coordinator';
import { Recorder } from '../../test/support/recorder';
import { startPrivateRedis, type PrivateRedis } from '../../test/support/redis';
import { RedisStore, redisRecordKey } from './redis-store';
import { connect, deleteKeys, newRecordKey, readRecord, REDIS_URL, uniquePrefix, waitUntil } from './redis.test-support';

/**
 * Completion against a real Redis that goes away: restarted (durable, so it
 * loses nothing) while the action runs, or reached through a connection that
 * drops the reply of a command Redis did run, which ioredis then resends
 * (`autoResendUnfulfilledCommands`). Either way the action runs once.
 */
const prefix = uniquePrefix();
const OPERATION = 'payments.charge';

describe('RedisStore completion across a Redis restart', () => {
  let redis: PrivateRedis;
  let client: Redis;
  let store: RedisStore;

  beforeEach(async () => {
    redis = await startPrivateRedis({ durable: true });
    client = await connect(redis.url, { disconnectTimeout: 100 });
    store = new RedisStore({ client, prefix, ownsClient: true });
  });

  afterEach(async () => {
    await store.close();
    await redis.stop();
  });

  test('a restart (AOF, appendfsync always) while the action runs: the completion is stored, the retry replays, one charge', async () => {
    const recorder = new Recorder();
    const coordinator = new IdempotencyCoordinator({ service: 'payments', store, observer: recorder, replayCache: false });
    // A lease long enough for a loaded machine to restart Redis and reconnect within it.
    const request = { operation: OPERATION, key: 'order-42', fingerprint: 'fp', policy: { leaseMs: 5_000 } };
    let charges = 0;
    let restarted: Promise<void> | undefined;
    const charge = async () => {
      charges += 1;
      // Killed now, back a moment later: the completion meets a Redis that is down or restarting.
      restarted = redis.restart();
      await once(client, 'close');
      return { statusCode: 201, body: { chargeId: `ch_${charges}` } };
    };

    const first = await coordinator.run(request, charge);
    await restarted;
    if (client.status !== 'ready') await once(client, 'ready');
    const retry = await coordinator.run(request, charge);

    expect(first).toMatchObject({ replayed: false, value: { body: { chargeId: 'ch_1' } } });
    expect(retry).toMatchObject({ replayed: true, value: { body: { chargeId: 'ch_1' } } });
    expect(charges).toBe(1);
    // The completion met a connection that was gone: sent once the reconnect under way was ready (a server back
    // by then), or failed (a store_error) and retried by the coordinator. Either way, stored once.
    expect(recorder.outcomes().slice(-2)).toEqual(['executed', 'replayed']);
  });
});

/**
 * A proxy in front of the shared Redis that can drop what Redis answers,
 * then cut the connections: what a client sees when a connection dies
 * after Redis ran its command and before the reply arrived.
 */
async function replyDroppingProxy(target: URL) {
  const clients = new Set<Socket>();
  let dropping = false;
  const server = createServer((client) => {
    const upstream = connectTcp({ host: target.hostname, port: Number(target.port) });
    for (const socket of [client, upstream]) socket.on('error', () => undefined);
    clients.add(client);
    client.pipe(upstream);
    upstream.on('data', (chunk: Buffer) => dropping || client.write(chunk));
    client.once('close', () => (clients.delete(client), upstream.destroy()));
    upstream.once('close', () => client.destroy());
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('The proxy has no TCP port');
  return {
    url: `redis://127.0.0.1:${address.port}`,
    dropReplies: () => void (dropping = true),
    /** Reset every connection; new ones get their replies again. */
    cut: () => {
      dropping = false;
      for (const client of clients) client.resetAndDestroy();
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('RedisStore calls ioredis resends after a reconnect', () => {
  let proxy: Awaited<ReturnType<typeof replyDroppingProxy>>;
  let admin: Redis;
  let store: RedisStore;

  beforeEach(async () => {
    proxy = await replyDroppingProxy(new URL(REDIS_URL));
    admin = await connect();
    store = new RedisStore({ client: await connect(proxy.url), prefix, ownsClient: true });
  });

  afterEach(async () => {
    await store.close();
    await proxy.close();
    await deleteKeys(admin, prefix);
    await admin.quit();
  });

  test('a claim resent by its owner answers claimed with the same epoch, not in_progress', async () => {
    const recordKey = newRecordKey();
    const record = redisRecordKey(recordKey, prefix);
    proxy.dropReplies();
    const answer = store.claim({ recordKey, fingerprint: 'fp', owner: 'owner-a', leaseMs: 30_000 });
    await waitUntil(async () => (await admin.exists(record)) === 1, 5_000, 'the claim to land');
    proxy.cut(); // ioredis resends the claim

    expect(await answer).toEqual({ status: 'claimed', epoch: Number((await readRecord(admin, record))?.epoch) });
  });

  test('a completion resent after it was stored: the caller gets its answer, not a lost lease; one charge', async () => {
    const recorder = new Recorder();
    const coordinator = new IdempotencyCoordinator({ service: 'payments', store, observer: recorder, replayCache: false });
    const request = { operation: OPERATION, key: `order-${newRecordKey()}`, fingerprint: 'fp' };
    const record = redisRecordKey(coordinator.recordKey(OPERATION, '', request.key), prefix);
    let charges = 0;
    const charge = async () => {
      charges += 1;
      proxy.dropReplies(); // the completion's reply is lost
      return { statusCode: 201, body: { chargeId: `ch_${charges}` } };
    };

    const first = coordinator.run(request, charge);
    await waitUntil(async () => (await readRecord(admin, record))?.status === 'completed', 5_000, 'the completion to land');
    proxy.cut();

    expect(await first).toMatchObject({ replayed: false, value: { body: { chargeId: 'ch_1' } } });
    expect(await coordinator.run(request, charge)).toMatchObject({ replayed: true, value: { body: { chargeId: 'ch_1' } } });
    expect(charges).toBe(1);
    expect(recorder.count('stale_completion_refused')).toBe(0);
  });
});
