/**
 * The Redis store, its own subpath (`@idempotency-chain/idempotency/redis`)
 * so that the core never loads ioredis. A single `Redis` or a `Cluster`.
 */
export { RedisStore, redisRecordKey, type RedisStoreOptions } from './redis-store';
export type { PubSubMode } from './completion-channels';
export { FAIL_FAST_REDIS_OPTIONS, createRedisClient, createRedisCluster, type FailFastClusterOptions } from './redis-client';
