import { createRedisClient } from '@idempotency-chain/idempotency/redis';
import type { Redis } from 'ioredis';
import { randomUUID } from 'node:crypto';
import type { Ledger } from '@idempotency-chain/payments';
import { StaleWriteError } from './stale-write';
import { MemoryLedger } from './memory-ledger';
import { RedisLedger } from './redis-ledger';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
let redis: Redis;
const prefix = `test-ledger:${randomUUID()}:`;

beforeAll(async () => {
  redis = createRedisClient(REDIS_URL);
  await redis.connect();
});
afterAll(async () => {
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length > 0) await redis.del(...keys);
  await redis.quit();
});

describe.each<[string, () => Ledger]>([
  ['MemoryLedger', () => new MemoryLedger(60_000)],
  ['RedisLedger', () => new RedisLedger(redis, 60_000, prefix)],
])('%s', (_name, make) => {
  const entry = () => ({ orderId: `o-${randomUUID()}`, account: 'acct', amountCents: 500 });

  it('answers a second write of the same record with its first charge', async () => {
    const ledger = make();
    const order = entry();
    const recordKey = randomUUID();
    const first = await ledger.charge(order, { recordKey, epoch: 10 });
    const retry = await ledger.charge(order, { recordKey, epoch: 11 });
    expect(retry.chargeId).toBe(first.chargeId);
    expect(await ledger.chargesOf(order.orderId)).toHaveLength(1);
  });

  it('refuses a writer whose epoch is older than one already seen for the record', async () => {
    const ledger = make();
    const order = entry();
    const recordKey = randomUUID();
    await ledger.charge(order, { recordKey, epoch: 20 });
    await expect(ledger.charge(order, { recordKey, epoch: 19 })).rejects.toBeInstanceOf(StaleWriteError);
    expect(await ledger.chargesOf(order.orderId)).toHaveLength(1);
  });

  it('charges every unfenced write', async () => {
    const order = entry();
    const ledger = make();
    await ledger.charge(order);
    await ledger.charge(order);
    expect(await ledger.chargesOf(order.orderId)).toHaveLength(2);
  });
});

describe("after the record's retention", () => {
  const order = () => ({ orderId: `o-${randomUUID()}`, account: 'acct', amountCents: 500 });

  it("MemoryLedger forgets the record's charge and epoch, as the record itself is forgotten", async () => {
    let now = 1_000;
    const ledger = new MemoryLedger(500, () => now);
    const entry = order();
    const first = await ledger.charge(entry, { recordKey: 'r', epoch: 20 });
    now += 499;
    expect((await ledger.charge(entry, { recordKey: 'r', epoch: 21 })).chargeId).toBe(first.chargeId);
    now += 501; // past the retention of both the charge and the last fence
    const again = await ledger.charge(entry, { recordKey: 'r', epoch: 5 });
    expect(again.chargeId).not.toBe(first.chargeId);
    expect(await ledger.chargesOf(entry.orderId)).toHaveLength(2);
  });

  it("RedisLedger does the same through its keys' TTL", async () => {
    const ledger = new RedisLedger(redis, 200, prefix);
    const entry = order();
    const recordKey = randomUUID();
    const first = await ledger.charge(entry, { recordKey, epoch: 20 });
    // Expiry is Redis's own clock: wait until both keys are gone, however long a loaded machine takes.
    const keys = [`${prefix}fence:{${recordKey}}`, `${prefix}charge:{${recordKey}}`];
    for (let waited = 0; (await redis.exists(...keys)) > 0; waited += 50) {
      if (waited > 10_000) throw new Error('the ledger keys did not expire within 10 s');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const again = await ledger.charge(entry, { recordKey, epoch: 5 });
    expect(again.chargeId).not.toBe(first.chargeId);
    expect(await ledger.chargesOf(entry.orderId)).toHaveLength(2);
  });
});
