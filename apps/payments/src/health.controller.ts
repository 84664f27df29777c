import { IdempotencyHealthIndicator } from '@idempotency-chain/idempotency/nest';
import { Controller, Get } from '@nestjs/common';
import { HealthCheck, HealthCheckService } from '@nestjs/terminus';

/**
 * `GET /health`, readiness: the process answers and its idempotency store
 * does too. A service whose store is down answers its idempotent routes
 * 503, so it says `error` here (503) and takes no traffic.
 */
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly idempotencyStore: IdempotencyHealthIndicator,
  ) {}

  @Get()
  @HealthCheck()
  check() {
    return this.health.check([() => this.idempotencyStore.isHealthy('idempotencyStore')]);
  }
}
