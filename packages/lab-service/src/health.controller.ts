import { Controller, Get, Inject } from '@nestjs/common';
import { HealthCheck, HealthCheckService, HealthIndicatorService } from '@nestjs/terminus';
import { STORE } from './tokens';
import type { StoreBinding } from './store.factory';

/** Readiness: the process answers and its idempotency store does too. */
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly indicator: HealthIndicatorService,
    @Inject(STORE) private readonly binding: StoreBinding,
  ) {}

  @Get()
  @HealthCheck()
  check() {
    return this.health.check([
      async () => {
        const store = this.indicator.check('idempotencyStore');
        const up = await this.binding.ping().catch(() => false);
        return up ? store.up() : store.down({ message: 'store does not answer' });
      },
    ]);
  }
}
