import { pings } from '@idempotency-chain/scenarios';
import { ConsoleStore } from './console-store';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 });

function portOf(url: string | undefined): number {
  return Number(new URL(url ?? '').port);
}

describe('the console’s stores', () => {
  it('keep the records in a Redis of the console’s own, which "store down" stops and starts, and the ledger where the runner would', async () => {
    const store = await ConsoleStore.open();
    try {
      const env = store.env();
      expect(env.IDEMPOTENCY_STORE).toBe('redis');
      expect(env.LEDGER_REDIS_URL).toBe(process.env.REDIS_URL || store.choice.redisUrl);
      expect(env.REDIS_URL).not.toBe(env.LEDGER_REDIS_URL);
      const records = portOf(env.REDIS_URL);
      expect(await pings(records)).toBe(true);

      expect(await store.setDown(true)).toBe(true);
      expect(await pings(records)).toBe(false);
      expect(store.view().down).toBe(true);
      expect(await pings(portOf(env.LEDGER_REDIS_URL))).toBe(true);
      expect(await store.setDown(true)).toBe(false);

      expect(await store.setDown(false)).toBe(true);
      expect(await pings(records)).toBe(true);
      expect(store.view()).toMatchObject({ kind: 'redis', down: false });
    } finally {
      await store.close();
    }
  });

  it('fall back to memory with no Redis at all, and say why "store down" is not offered', async () => {
    const saved = { REDIS_URL: process.env.REDIS_URL, REDIS_SERVER: process.env.REDIS_SERVER };
    delete process.env.REDIS_URL;
    process.env.REDIS_SERVER = '/nonexistent/redis-server';
    try {
      const store = await ConsoleStore.open();
      expect(store.env()).toEqual({ IDEMPOTENCY_STORE: 'memory' });
      expect(store.view()).toMatchObject({ kind: 'memory', down: false, outageUnavailable: expect.stringMatching(/in-memory stores/) });
      await expect(store.setDown(true)).rejects.toThrow(/not available/);
      await store.close();
    } finally {
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  });
});
