/**
 * The local processes a test or the lab's runner starts, and what they need:
 * a private `redis-server` of their own (never the shared one), free
 * loopback ports, and children that never outlive the process that
 * started them.
 */
export { track } from './children';
export { freePort, freePorts, portTaken } from './ports';
export { pings, PrivateRedis, privateRedisUnavailable, redisCommand, redisServerBinary } from './private-redis';
export type { PrivateRedisOptions } from './private-redis';
