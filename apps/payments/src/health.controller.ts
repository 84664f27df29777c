import { IdempotencyHealthIndicator } from '@idempotency-chain/idempotency/nest';
import { Controller, Get, Inject, Optional } from '@nestjs/common';
import { HealthCheck, HealthCheckService, type HealthIndicatorFunction } from '@nestjs/terminus';

/** The checks a transport adds to `/health` (`CHARGE_TRANSPORT=amqp`: the broker the consumer reads). */
export const TRANSPORT_HEALTH_CHECKS = Symbol('TRANSPORT_HEALTH_CHECKS');

/**
 * `GET /health`, readiness: the process answers and its idempotency store
 * does too, and so do the transport's (`TRANSPORT_HEALTH_CHECKS`: the
 * broker, under `CHARGE_TRANSPORT=amqp`). A service whose store is down
 * answers its idempotent routes 503, and one whose consumer lost the broker
 * takes no charge from the queue, so it says `error` here (503).
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
