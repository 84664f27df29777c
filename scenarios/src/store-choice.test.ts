import { pings } from '@idempotency-chain/local-processes';
import { chooseStore } from './store-choice';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

/** Run `body` with these environment variables (undefined: unset), then put them back. */
async function withEnv<T>(vars: Record<string, string | undefined>, body: () => Promise<T>): Promise<T> {
  const before = Object.fromEntries(Object.keys(vars).map((name) => [name, process.env[name]]));
  const apply = (values: Record<string, string | undefined>) => {
    for (const [name, value] of Object.entries(values)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  };
  apply(vars);
  try {
    return await body();
  } finally {
    apply(before);
  }
}

describe('the store a run uses', () => {
  it('is the Redis at REDIS_URL when it is set, and nothing is started', async () => {
    const choice = await withEnv({ REDIS_URL: 'redis://127.0.0.1:6379' }, chooseStore);
    expect(choice).toMatchObject({ store: 'redis', redisUrl: 'redis://127.0.0.1:6379', note: 'REDIS_URL' });
  });

  it('without REDIS_URL, is a redis-server of its own on a free port, gone once stopped', async () => {
    const choice = await withEnv({ REDIS_URL: undefined }, chooseStore);
    try {
      expect(choice.store).toBe('redis');
      expect(choice.note).toContain('its own redis-server');
      const port = Number(new URL(choice.redisUrl!).port);
      expect(port).not.toBe(6379);
      expect(await pings(port)).toBe(true);
      await choice.stop();
      expect(await pings(port)).toBe(false);
    } finally {
      await choice.stop();
    }
  });

  it('falls back to memory only when neither redis-server nor a container runtime is there, and says why', async () => {
    const choice = await withEnv(
      { REDIS_URL: undefined, REDIS_SERVER: '/nonexistent/redis-server', DOCKER_HOST: 'unix:///nonexistent/docker.sock' },
      chooseStore,
    );
    expect(choice.store).toBe('memory');
    expect(choice.redisUrl).toBeUndefined();
    expect(choice.note).toMatch(/no REDIS_URL, \/nonexistent\/redis-server is not installed \(ENOENT\), no container runtime/);
  });
});
