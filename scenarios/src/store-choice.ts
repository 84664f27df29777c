/** Which store the lab runs on, and why. */
export interface StoreChoice {
  store: 'redis' | 'memory';
  redisUrl?: string;
  note: string;
  stop(): Promise<void>;
}

/**
 * Redis when `REDIS_URL` is set or testcontainers can start one; the
 * in-memory store otherwise, and the output says so.
 */
export async function chooseStore(): Promise<StoreChoice> {
  if (process.env.REDIS_URL) {
    return { store: 'redis', redisUrl: process.env.REDIS_URL, note: 'REDIS_URL', stop: async () => undefined };
  }
  try {
    const { RedisContainer } = await import('@testcontainers/redis');
    const container = await new RedisContainer('redis:7-alpine').start();
    return {
      store: 'redis',
      redisUrl: container.getConnectionUrl(),
      note: 'testcontainers',
      stop: async () => {
        await container.stop();
      },
    };
  } catch (error) {
    const reason = (error as Error).message.split('\n')[0];
    return { store: 'memory', note: `no REDIS_URL and no container runtime (${reason}): in-memory stores`, stop: async () => undefined };
  }
}
