import { IdempotencyHealthIndicator } from '@idempotency-chain/idempotency/nest';
import { Controller, Get, Inject, Optional } from '@nestjs/common';
import { HealthCheck, HealthCheckService, type HealthIndicatorFunction } from '@nestjs/terminus';

/** The checks a transport's module adds to `/health` (`QueuedOrdersModule`: the broker). */
export const TRANSPORT_HEALTH_CHECKS = Symbol('TRANSPORT_HEALTH_CHECKS');

/**
 * `GET /health`, readiness: the process answers and its idempotency store
 * does too, and so do the transport's (`TRANSPORT_HEALTH_CHECKS`: the
 * broker, under `QueuedOrdersModule`). A service whose store or broker is
 * down answers its orders 503, so it says `error` here (503) and takes no
 * traffic.
 */
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly idempotencyStore: IdempotencyHealthIndicator,
    @Optional() @Inject(TRANSPORT_HEALTH_CHECKS) private readonly transport: HealthIndicatorFunction[] = [],
  ) {}

  @Get()
  @HealthCheck()
  check() {
    return this.health.check([() => this.idempotencyStore.isHealthy('idempotencyStore'), ...this.transport]);
  }
}
