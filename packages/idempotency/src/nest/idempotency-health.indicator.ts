import { Inject, Injectable } from '@nestjs/common';
import { isIdempotencyError, SchemaVersionError, StoreRefusedError } from '../errors';
import { IDEMPOTENCY_MODULE_OPTIONS } from './idempotency.module-definition';
import type { IdempotencyModuleOptions } from './idempotency.options';

/**
 * One indicator's result as `@nestjs/terminus` reads it (its
 * `HealthIndicatorResult`): built here without importing terminus, so
 * the `./nest` entry loads in an app that does not use it.
 *
 * @public
 */
export type StoreHealth<Key extends string> = Record<Key, { status: 'up' | 'down'; message?: string }>;

/** Longest a health check waits for the store, by default: a probe must answer even when the store hangs. */
const DEFAULT_TIMEOUT_MS = 1000;

/**
 * Readiness of the idempotency store, for `@nestjs/terminus`: `up` when the
 * store answers its `ping()` within the timeout (a store without `ping()`,
 * like `MemoryStore`, is always up; a Redis Cluster with a shard down is
 * `up` with a message saying which), `down` with the reason otherwise: one
 * that does not answer, or one that answers but refuses this service. A
 * service whose store is down answers its idempotent routes 503 (fail
 * closed), so it should not take traffic: point the readiness probe here.
 * Provided and exported by `IdempotencyModule`.
 *
 * @example
 * @Controller('health')
 * export class HealthController {
 *   constructor(private readonly health: HealthCheckService, private readonly store: IdempotencyHealthIndicator) {}
 *   @Get() @HealthCheck()
 *   check() { return this.health.check([() => this.store.isHealthy()]); }
 * }
 *
 * @public
 */
@Injectable()
export class IdempotencyHealthIndicator {
  constructor(@Inject(IDEMPOTENCY_MODULE_OPTIONS) private readonly options: IdempotencyModuleOptions) {}

  /** The store's health under `key` (default `idempotencyStore`). Never rejects: a failure is `down`. */
  async isHealthy<const Key extends string = 'idempotencyStore'>(
    key: Key = 'idempotencyStore' as Key,
    timeoutMs = DEFAULT_TIMEOUT_MS,
  ): Promise<StoreHealth<Key>> {
    const store = this.options.store;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      const answer = await Promise.race([store.ping?.(), timedOut]);
      // Degraded is still up: the store serves the records it can, and every pod would be taken out alike.
      if (answer) return { [key]: { status: 'up', message: `the idempotency store is degraded: ${answer.degraded}` } } as StoreHealth<Key>;
      return { [key]: { status: 'up' } } as StoreHealth<Key>;
    } catch (error) {
      // A store that answers but refuses (grants, credentials, a schema behind) is configuration to fix, not an outage.
      const refuses = isIdempotencyError(error, StoreRefusedError) || isIdempotencyError(error, SchemaVersionError);
      const why = refuses ? 'the idempotency store refuses this service' : 'the idempotency store does not answer';
      return { [key]: { status: 'down', message: `${why}: ${(error as Error).message}` } } as StoreHealth<Key>;
    } finally {
      clearTimeout(timer);
    }
  }
}
