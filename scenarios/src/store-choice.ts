import { PrivateRedis, privateRedisUnavailable } from '@idempotency-chain/local-processes';

/** Which store the lab runs on, and why. */
export interface StoreChoice {
  store: 'redis' | 'memory';
  redisUrl?: string;
  /** Why this store, for the output and RESULTS.md. */
  note: string;
  /** Where it came from, for the terminal only (ports and process ids change every run). */
  detail: string;
  stop(): Promise<void>;
}

const nothingToStop = async () => undefined;

/** A `redis-server` of the run's own, or why there is none. */
async function ownRedis(): Promise<StoreChoice | string> {
  const missing = privateRedisUnavailable();
  if (missing) return missing;
  try {
    const redis = await PrivateRedis.start();
    return {
      store: 'redis',
      redisUrl: redis.url,
      note: 'its own redis-server, as REDIS_URL was not set',
      detail: `redis-server pid ${redis.pid} on ${redis.url}, stopped when the run ends`,
      stop: () => redis.stop(),
    };
  } catch (error) {
    return `redis-server did not start (${(error as Error).message.split('\n')[0]})`;
  }
}

/** A Redis container, or why there is none. */
async function containerRedis(): Promise<StoreChoice | string> {
  try {
    const { RedisContainer } = await import('@testcontainers/redis');
    const container = await new RedisContainer('redis:7-alpine').start();
    return {
      store: 'redis',
      redisUrl: container.getConnectionUrl(),
      note: 'a Redis container (testcontainers), as REDIS_URL was not set and redis-server could not run',
      detail: `container ${container.getId().slice(0, 12)} at ${container.getConnectionUrl()}, removed when the run ends`,
      stop: async () => {
        await container.stop();
      },
    };
  } catch (error) {
    return `no container runtime (${(error as Error).message.split('\n')[0]})`;
  }
}

/**
 * The lab's store, first that works: the Redis at `REDIS_URL`; a
 * `redis-server` the run starts on a free port (and stops however the run
 * ends); a Redis container; the in-memory store, saying why it came to that.
 */
export async function chooseStore(): Promise<StoreChoice> {
  const url = process.env.REDIS_URL;
  if (url) return { store: 'redis', redisUrl: url, note: 'REDIS_URL', detail: 'the Redis at REDIS_URL', stop: nothingToStop };
  const reasons: string[] = [];
  for (const attempt of [ownRedis, containerRedis]) {
    const choice = await attempt();
    if (typeof choice !== 'string') return choice;
    reasons.push(choice);
  }
  const note = `in-memory stores: no REDIS_URL, ${reasons.join(', ')}`;
  return { store: 'memory', note, detail: note, stop: nothingToStop };
}
