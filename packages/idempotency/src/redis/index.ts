/**
 * The Redis store, its own subpath (`@idempotency-chain/idempotency/redis`)
 * so that the core never loads ioredis.
 */
export { RedisStore, type RedisStoreOptions } from './redis-store';
export { FAIL_FAST_REDIS_OPTIONS, createRedisClient } from './redis-client';
