import { Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { Registry } from 'prom-client';
import { IdempotencyCoordinator } from '../coordinator';
import { trackCurrentExecution } from '../current-execution';
import { FanOutObserver } from './fan-out.observer';
import { IdempotencyCallPipe } from './idempotency-call';
import { IdempotencyRunner } from './idempotency.runner';
import { IdempotentRoutes } from './idempotent-routes';
import { checkModuleOptions } from './module-options';
import { IdempotencyMetrics } from './idempotency.metrics';
import { IDEMPOTENCY_MODULE_OPTIONS, IdempotencyConfigurableModule } from './idempotency.module-definition';
import type { IdempotencyModuleOptions } from './idempotency.options';

/**
 * Idempotency for a NestJS service: provides and exports the
 * `IdempotencyCoordinator`, the `IdempotencyRunner` the handlers `@Idempotent`
 * protects call through, and `IdempotencyMetrics`. Every `@Idempotent` route's policy is
 * resolved and checked when the app boots. Its errors are `HttpException`s
 * (400, 409 with `Retry-After`, 422, 503), answered by any app; register
 * `ProblemDetailsFilter` to serve them as `application/problem+json`.
 *
 * @example
 * @Module({
 *   imports: [
 *     IdempotencyModule.forRootAsync({
 *       inject: [ConfigService],
 *       useFactory: (config: ConfigService) => ({
 *         service: 'payments',
 *         store: new RedisStore({ client: createRedisClient(config.getOrThrow('REDIS_URL')), ownsClient: true }),
 *         operations: { 'payments.charge': { inFlight: 'wait', retentionMs: 86_400_000 } },
 *         scope: (ctx) => ctx.switchToHttp().getRequest().user?.tenantId,
 *         closeStore: true,
 *       }),
 *     }),
 *   ],
 *   controllers: [ChargesController],
 *   providers: [{ provide: APP_FILTER, useClass: ProblemDetailsFilter }],
 * })
 * export class PaymentsModule {}
 */
@Module({
  imports: [DiscoveryModule],
  providers: [
    {
      provide: IdempotencyMetrics,
      inject: [IDEMPOTENCY_MODULE_OPTIONS],
      useFactory: ({ metrics }: IdempotencyModuleOptions) =>
        new IdempotencyMetrics({ registry: metrics === false ? new Registry() : metrics?.registry }),
    },
    {
      provide: IdempotencyCoordinator,
      inject: [IDEMPOTENCY_MODULE_OPTIONS, IdempotencyMetrics],
      useFactory: (options: IdempotencyModuleOptions, metrics: IdempotencyMetrics) => {
        checkModuleOptions(options);
        if (options.currentExecution) trackCurrentExecution();
        return new IdempotencyCoordinator({
          service: options.service,
          store: options.store,
          defaults: options.defaults,
          operations: options.operations,
          replayCache: options.replayCache,
          observer: new FanOutObserver([metrics, ...(options.observers ?? [])]),
        });
      },
    },
    IdempotentRoutes,
    IdempotencyRunner,
    IdempotencyCallPipe,
  ],
  exports: [IdempotencyCoordinator, IdempotentRoutes, IdempotencyRunner, IdempotencyCallPipe, IdempotencyMetrics, IDEMPOTENCY_MODULE_OPTIONS],
})
export class IdempotencyModule extends IdempotencyConfigurableModule implements OnApplicationShutdown {
  constructor(@Inject(IDEMPOTENCY_MODULE_OPTIONS) private readonly options: IdempotencyModuleOptions) {
    super();
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.options.closeStore) await this.options.store.close();
  }
}
