/**
 * The local processes a test or the lab's runner starts, and what they need:
 * a private `redis-server` of their own (never the shared one), free
 * loopback ports, and children that never outlive the process that
 * started them.
 */
export { track } from './local/children';
export { freePort, freePorts, portTaken } from './local/ports';
export { pings, PrivateRedis, privateRedisUnavailable, redisCommand, redisServerBinary } from './local/private-redis';
export type { PrivateRedisOptions } from './local/private-redis';
