import diagnostics from 'node:diagnostics_channel';
import type { Redis } from 'ioredis';
import { eventually, sleep, within } from '../../test/support/async';
import { duplicatesOfAHeldKey as heldKey } from '../../test/support/held-key';
import { Recorder } from '../../test/support/recorder';
import { startPrivateRedis, type PrivateRedis } from '../../test/support/redis';
import { IdempotencyCoordinator, type RunRequest } from '../coordinator';
import { InFlightError, isIdempotencyError, KeyReusedError } from '../errors';
import type { OperationPolicy } from '../policy';
import { LuaScript } from './lua-script';
import { RedisStore, redisRecordKey } from './redis-store';
import { connect, deleteKeys, readRecord, uniquePrefix } from './redis.test-support';
import { WAITING_SCRIPT } from './scripts';

const prefix = uniquePrefix();
const OPERATION = 'payments.charge';
const DUPLICATES = 2_000;
const request: RunRequest = { operation: OPERATION, key: 'the-key', fingerprint: 'fp' };
const WAITING_SHA = new LuaScript(WAITING_SCRIPT, 1).sha;

/**
 * 2,000 duplicates of one request wait on its held key, on a Redis server
 * of the test's own, whose `INFO commandstats` counts only this test's
 * commands. The poll is out of reach: what is counted is what waiting
 * itself costs.
 */
describe('2,000 duplicates waiting on one held key (real Redis)', () => {
  let redis: PrivateRedis;
  let admin: Redis;
  let store: RedisStore;
  let recorder: Recorder;
  let waitingScripts = 0;
  const countWaitingScripts = (message: unknown): void => {
    const { command, args } = message as { command: string; args: unknown[] };
    if (command === 'evalsha' && args[0] === WAITING_SHA) waitingScripts += 1;
  };

  beforeEach(async () => {
    redis = await startPrivateRedis();
    admin = await connect(redis.url);
    // A burst of 2,000 claims on a loaded machine may take longer than the fail-fast second: counted here, not timed.
    const client = await connect(redis.url, { commandTimeout: 20_000 });
    store = new RedisStore({ client, prefix, pollIntervalMs: 600_000, ownsClient: true });
    recorder = new Recorder();
    waitingScripts = 0;
    diagnostics.subscribe('tracing:ioredis:command:start', countWaitingScripts);
  });

  afterEach(async () => {
    diagnostics.unsubscribe('tracing:ioredis:command:start', countWaitingScripts);
    await store.close();
    await admin.quit();
    await redis.stop();
  });

  const writes = async (command: string): Promise<number> => {
    const line = (await admin.info('commandstats')).split('\r\n').find((l) => l.startsWith(`cmdstat_${command}:`)) ?? '';
    return Number(/calls=(\d+)/.exec(line)?.[1] ?? 0);
  };

  /** Every command Redis ran, its scripts' own included, but this test's `INFO`. */
  const commands = async (): Promise<number> =>
    (await admin.info('commandstats'))
      .split('\r\n')
      .filter((line) => line.startsWith('cmdstat_') && !line.startsWith('cmdstat_info:'))
      .reduce((sum, line) => sum + Number(/calls=(\d+)/.exec(line)?.[1] ?? 0), 0);

  /**
   * A holder on the key, and `DUPLICATES` requests for it once every one has
   * found it held; `whileHeld` runs then, before the holder completes.
   */
  async function duplicatesOfAHeldKey(defaults: Partial<OperationPolicy>, whileHeld?: () => Promise<void>) {
    const coordinator = new IdempotencyCoordinator({
      service: 'payments',
      store,
      observer: recorder,
      replayCache: false,
      defaults: { leaseMs: 60_000, ...defaults },
    });
    const marksBefore = await writes('setrange');
    const { holder, duplicates, release } = await heldKey(coordinator, recorder, request, DUPLICATES);
    const record = redisRecordKey(coordinator.recordKey(OPERATION, '', request.key), prefix);
    await eventually(
      async () => Number(((await admin.pubsub('NUMSUB', `${record}:done`)) as [string, number])[1]) === 1,
      'the subscription',
    );
    await eventually(async () => (await readRecord(admin, record))?.w === '1', 'the record to be marked');
    const marks = (await writes('setrange')) - marksBefore;
    await whileHeld?.();
    release();
    await within(holder, 10_000, 'the holder');
    return { marks, answers: await within(duplicates, 30_000, 'the duplicates') };
  }

  test('share one subscription, one read and one mark (O(1) store writes), and all get the replay', async () => {
    const { marks, answers } = await duplicatesOfAHeldKey({ maxWaitersPerKey: DUPLICATES });
    expect({ marks, waitingScripts }).toEqual({ marks: 1, waitingScripts: 1 });
    expect(answers.filter((answer) => (answer as { replayed?: boolean }).replayed !== true)).toEqual([]);
  }, 60_000);

  test('past maxWaitersPerKey (default 1,000) are answered 409 with Retry-After; the others get the replay', async () => {
    const { answers } = await duplicatesOfAHeldKey({});
    const refused = answers.filter((answer) => isIdempotencyError(answer, InFlightError));
    expect(refused).toHaveLength(DUPLICATES - 1_000);
    // The lease left when each was refused, rounded up: 60 s at most, less by however long a loaded machine took.
    const retryAfter = refused.map((error) => error.retryAfterSeconds);
    expect(Math.max(...retryAfter)).toBeLessThanOrEqual(60);
    expect(Math.min(...retryAfter)).toBeGreaterThanOrEqual(1);
    expect(answers.filter((answer) => (answer as { replayed?: boolean }).replayed === true)).toHaveLength(1_000);
  }, 60_000);

  test('at a 3 s lease, 1,000 waiters cost Redis one re-check per lease, not one each: under 200 commands/s', async () => {
    // Each waiter's wait ends with the holder's lease, which its heartbeat keeps renewing: the key stays held.
    let perSecond = Number.NaN;
    const { answers } = await duplicatesOfAHeldKey({ leaseMs: 3_000 }, async () => {
      const [before, started] = [await commands(), performance.now()];
      await sleep(9_000); // three leases
      perSecond = ((await commands()) - before) / ((performance.now() - started) / 1000);
    });
    // One waiter per key claims again per lease: about ten commands a second. One claim per waiter per lease: ~1,000.
    expect(perSecond).toBeLessThan(200);
    expect(answers.filter((answer) => isIdempotencyError(answer, InFlightError))).toHaveLength(DUPLICATES - 1_000);
    expect(answers.filter((answer) => (answer as { replayed?: boolean }).replayed === true)).toHaveLength(1_000);
  }, 90_000);
});

describe('waiters of one key for two requests (real Redis)', () => {
  const ownPrefix = uniquePrefix();
  let client: Redis;
  let store: RedisStore;

  beforeEach(async () => {
    client = await connect();
    // A short poll: a record the new holder wrote is not marked as waited on, and its completion may go unsignalled.
    store = new RedisStore({ client, prefix: ownPrefix, pollIntervalMs: 200 });
  });

  afterEach(async () => {
    await store.close();
    await deleteKeys(client, ownPrefix);
    await client.quit();
  });

  test('a retry of the new holder’s request replays its answer, though a waiter for the old holder’s waits too', async () => {
    // The holder changed between two waiters' claims: H1 (fingerprint X) lost the key, H2 (Z) took it.
    // The store answers X's claim on Z's record with the 32-hex digest it keeps, never Z's answer.
    const coordinator = new IdempotencyCoordinator({ service: 'payments', store, replayCache: false });
    const base = { operation: OPERATION, key: 'changed-holder', policy: { leaseMs: 10_000, maxWaitMs: 8_000 } };
    const recordKey = coordinator.recordKey(OPERATION, '', base.key);
    const record = redisRecordKey(recordKey, ownPrefix);
    let answered = 0;
    const claim = store.claim.bind(store);
    vi.spyOn(store, 'claim').mockImplementation(async (request) => {
      const answer = await claim(request);
      answered += 1;
      return answer;
    });
    const waiting = async (claims: number): Promise<void> => {
      await eventually(() => answered === claims, 'the claim');
      await new Promise((resolve) => setImmediate(resolve)); // past the claim, into the wait
    };
    const settle = (run: Promise<unknown>) => run.catch((error: unknown) => error);

    await claim({ recordKey, fingerprint: 'X', owner: 'h1', leaseMs: 10_000 });
    let runs = 0;
    const a = settle(coordinator.run({ ...base, fingerprint: 'X' }, async () => ((runs += 1), 'A ran')));
    await waiting(1);
    await client.del(record); // H1's lease ran out, with no completion to signal it
    await claim({ recordKey, fingerprint: 'Z', owner: 'h2', leaseMs: 10_000 });
    const b = settle(coordinator.run({ ...base, fingerprint: 'Z' }, async () => ((runs += 1), 'B ran')));
    await waiting(2);
    expect(await store.complete(recordKey, 'h2', JSON.stringify({ chargeId: 'ch_H2' }), 60_000)).toBe(true);

    expect(await within(b, 10_000, 'the retry of H2')).toMatchObject({ value: { chargeId: 'ch_H2' }, replayed: true, waited: true });
    expect(isIdempotencyError(await within(a, 10_000, 'the other request'), KeyReusedError)).toBe(true);
    expect(runs).toBe(0);
  });
});
