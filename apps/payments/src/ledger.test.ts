import { createRedisClient } from '@idempotency-chain/idempotency/redis';
import type { Redis } from 'ioredis';
import { randomUUID } from 'node:crypto';
import { MemoryLedger, PlainLedger, RedisLedger, StaleWriteError, type Ledger } from './ledger';

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
  ['MemoryLedger', () => new MemoryLedger()],
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

  it('charges every unfenced write, and so does the naive plain ledger', async () => {
    const order = entry();
    const ledger = make();
    await ledger.charge(order);
    const plain: Ledger = new PlainLedger(ledger);
    await plain.charge(order, { recordKey: 'r', epoch: 1 });
    await plain.charge(order, { recordKey: 'r', epoch: 1 });
    expect(await ledger.chargesOf(order.orderId)).toHaveLength(3);
  });
});
