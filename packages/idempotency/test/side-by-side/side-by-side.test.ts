import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import type { IdempotencyCoordinator, IdempotencyStore } from '../../src';
import type { InspectableStore } from '../../src/store-contract';
import { DATABASE_URL } from '../support/postgres';
import { CURRENT, FORMAT, capturedRelease, type Release } from './releases';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/**
 * A rolling deploy: the release before a record-format change and this
 * release serve one store at once, and a customer's retry lands on either.
 * Each case runs both on one key, each with its own code (the earlier one
 * as captured by scripts/capture-release.mjs) and its own connections, in
 * either order, and counts the charges: exactly one per key, and every
 * request answered with that charge's answer. format-fingerprint.test.ts
 * makes sure every format change adds the release before it here.
 */

/** One release's side of the deploy: its coordinator on its own store. */
interface Side {
  name: string;
  coordinator: IdempotencyCoordinator;
  store: InspectableStore;
  /** Resolves once a claim of this side found `recordKey` held by another. */
  sawHeld(recordKey: string): Promise<void>;
}

interface Charge {
  charge: string;
  by: string;
}

/**
 * The store, seen by the test: every call goes to it, and a claim that
 * finds the key in progress is reported, so a case can wait for the second
 * request to have met the first one's claim instead of sleeping.
 */
function watched(store: InspectableStore): Pick<Side, 'store' | 'sawHeld'> {
  const held = new Map<string, () => void>();
  const seen = new Map<string, Promise<void>>();
  const sawHeld = (recordKey: string): Promise<void> => {
    let promise = seen.get(recordKey);
    if (!promise) {
      promise = new Promise((resolve) => held.set(recordKey, resolve));
      seen.set(recordKey, promise);
    }
    return promise;
  };
  const proxy = new Proxy(store, {
    get(target, property) {
      const value = Reflect.get(target, property) as unknown;
      if (property === 'claim') {
        return async (request: Parameters<IdempotencyStore['claim']>[0]) => {
          const result = await target.claim(request);
          if (result.status === 'in_progress') {
            void sawHeld(request.recordKey);
            held.get(request.recordKey)?.();
          }
          return result;
        };
      }
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { store: proxy, sawHeld };
}

function side(release: Release, store: InspectableStore): Side {
  const seen = watched(store);
  const coordinator = new release.core.IdempotencyCoordinator({
    service: 'side-by-side',
    store: seen.store,
    defaults: { inFlight: 'wait', leaseMs: 20_000, maxWaitMs: 25_000 },
  });
  return { name: release.name, coordinator, ...seen };
}

/** A key's requests and the charges they made. */
function account() {
  const charges: Charge[] = [];
  const key = `order-${randomUUID()}`;
  const request = { operation: 'payments.charge', key, fingerprint: 'amount=1000' };
  return {
    key,
    charges,
    recordKey: (by: Side) => by.coordinator.recordKey(request.operation, '', key),
    /** A charge by `by`, held until `hold` opens (once it began: `hold.began`); rejects when `failWith` is set. */
    pay: (by: Side, hold?: Hold, failWith?: Error) =>
      by.coordinator.run<Charge>(request, async () => {
        hold?.begin();
        await hold?.opened;
        if (failWith) throw failWith;
        const charge = { charge: randomUUID(), by: by.name };
        charges.push(charge);
        return charge;
      }),
  };
}

/** A charge held in its action: `began` once it runs (its claim made), until `open()`. */
interface Hold {
  begin(): void;
  began: Promise<void>;
  open(): void;
  opened: Promise<void>;
}

function hold(): Hold {
  let begin!: () => void;
  let open!: () => void;
  const began = new Promise<void>((resolve) => (begin = resolve));
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { begin, began, open, opened };
}

/**
 * `first`'s charge, held in its action, then the request of the side
 * `second()` gives on the key, once its claim met the hold (or once it
 * ended without meeting it: a release that looks the key up elsewhere
 * charges, and the case fails on the count, not on a timeout). `open()`
 * lets the charge end; `ended` settles with both runs.
 */
async function heldWhile(payment: ReturnType<typeof account>, first: Side, second: () => Side | Promise<Side>) {
  const holding = hold();
  const firstRun = payment.pay(first, holding);
  await holding.began;
  const by = await second();
  const secondRun = payment.pay(by);
  await Promise.race([by.sawHeld(payment.recordKey(by)), secondRun.catch(() => undefined)]);
  return { by, open: holding.open, ended: Promise.all([firstRun, secondRun]) };
}

/** The cases every captured release runs beside this one, on `pair()`'s two sides of one store. */
function sideBySide(pair: () => { earlier: Side; current: Side }): void {
  const orders = [
    ['the earlier release holds the key, this one', (p: { earlier: Side; current: Side }) => [p.earlier, p.current] as const],
    ['this release holds the key, the earlier one', (p: { earlier: Side; current: Side }) => [p.current, p.earlier] as const],
  ] as const;

  it.each(orders)('%s waits for its answer and replays it: one charge', async (_, order) => {
    const [first, second] = order(pair());
    const payment = account();
    const held = await heldWhile(payment, first, () => second);
    held.open();
    const [a, b] = await held.ended;
    expect(payment.charges).toHaveLength(1);
    expect(a.replayed).toBe(false);
    expect(b).toMatchObject({ replayed: true, value: a.value });
    // Later retries, on either side, replay the same answer.
    for (const retry of order(pair())) expect(await payment.pay(retry)).toMatchObject({ replayed: true, value: a.value });
    expect(payment.charges).toHaveLength(1);
  });

  it.each(orders)('%s takes it over once the holder failed: one charge', async (_, order) => {
    const [first, second] = order(pair());
    const payment = account();
    await expect(payment.pay(first, undefined, new Error('card network timeout'))).rejects.toThrow('card network timeout');
    const retried = await payment.pay(second);
    expect(retried.replayed).toBe(false);
    expect(await payment.pay(first)).toMatchObject({ replayed: true, value: retried.value });
    expect(payment.charges).toEqual([retried.value]);
  });

  it('of requests racing on both releases at once, one charges and all get its answer', async () => {
    const { earlier, current } = pair();
    const payment = account();
    const runs = await Promise.all(Array.from({ length: 8 }, (_, i) => payment.pay(i % 2 === 0 ? earlier : current)));
    expect(payment.charges).toHaveLength(1);
    expect(runs.filter((run) => !run.replayed)).toHaveLength(1);
    for (const run of runs) expect(run.value).toEqual(payment.charges[0]);
  });

  it("refuses this release's operator release of a live holder of the earlier release without force", async () => {
    const { earlier, current } = pair();
    const payment = account();
    const held = await heldWhile(payment, earlier, () => current);
    const released = await current.store.releaseByOperator(payment.recordKey(current), { force: false });
    expect(released.outcome).toBe('refused_holder_alive');
    held.open();
    const [a, b] = await held.ended;
    expect(b).toMatchObject({ replayed: true, value: a.value });
    expect(payment.charges).toHaveLength(1);
  });
}

describe.each(FORMAT.sideBySide.map((entry) => [entry.release] as const))('this release beside %s', (name) => {
  const earlier = capturedRelease(name);

  describe('on one Redis', () => {
    const prefix = `side-by-side:${randomUUID()}:`;
    const sides: { earlier: Side; current: Side }[] = [];
    const clients: { quit(): Promise<unknown> }[] = [];
    const stores: InspectableStore[] = [];

    beforeAll(async () => {
      const open = async (release: Release) => {
        const client = release.redis.createRedisClient(REDIS_URL);
        client.on('error', () => undefined);
        await client.connect();
        clients.push(client);
        const store = new release.redis.RedisStore({ client, prefix });
        stores.push(store);
        return side(release, store);
      };
      sides.push({ earlier: await open(earlier), current: await open(CURRENT) });
    });
    afterAll(async () => {
      for (const store of stores) await store.close();
      const [client] = clients;
      if (client && 'scan' in client) {
        const redis = client as unknown as import('ioredis').Redis;
        const keys = await redis.keys(`${prefix}*`);
        if (keys.length > 0) await redis.del(...keys);
      }
      for (const client of clients) await client.quit();
    });

    sideBySide(() => sides[0] as { earlier: Side; current: Side });
  });

  describe('on one PostgreSQL schema, migrated by this release while the earlier one serves', () => {
    const schema = `side_by_side_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
    const sides: { earlier: Side; current: Side }[] = [];
    const pools: Pool[] = [];
    const stores: InspectableStore[] = [];
    const open = (release: Release) => {
      const pool = release.postgres.createPostgresPool(DATABASE_URL, { max: 6 });
      pools.push(pool);
      const store = new release.postgres.PostgresStore({ pool, schema, pollIntervalMs: 60_000, sweepIntervalMs: 0 });
      stores.push(store);
      return { pool, side: side(release, store) };
    };

    beforeAll(async () => {
      const before = open(earlier);
      await earlier.postgres.migrate(before.pool, { schema });
      // A charge the earlier release holds while this release migrates the schema and starts.
      const payment = account();
      const held = await heldWhile(payment, before.side, async () => {
        const after = open(CURRENT);
        await CURRENT.postgres.migrate(after.pool, { schema });
        return after.side;
      });
      held.open();
      const [a, b] = await held.ended;
      expect(b).toMatchObject({ replayed: true, value: a.value });
      expect(payment.charges).toHaveLength(1);
      sides.push({ earlier: before.side, current: held.by });
    });
    afterAll(async () => {
      for (const store of stores) await store.close();
      await pools[0]?.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      for (const pool of pools) await pool.end();
    });

    sideBySide(() => sides[0] as { earlier: Side; current: Side });
  });
});
