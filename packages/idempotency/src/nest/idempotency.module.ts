import { Inject, Logger, Module, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { Registry } from 'prom-client';
import { IdempotencyCoordinator } from '../coordinator';
import { trackCurrentExecution } from '../current-execution';
import { FanOutObserver } from './fan-out.observer';
import { IdempotencyCallPipe } from './idempotency-call';
import { IdempotencyHealthIndicator } from './idempotency-health.indicator';
import { IdempotencyRunner } from './idempotency.runner';
import { IdempotentRoutes } from './idempotent-routes';
import { IdempotencyMetrics } from './idempotency.metrics';
import { IDEMPOTENCY_MODULE_OPTIONS, IdempotencyConfigurableModule } from './idempotency.module-definition';
import { checkModuleOptions, moduleSettings, type IdempotencyModuleOptions } from './idempotency.options';

/**
 * Idempotency for a NestJS service: provides and exports the
 * `IdempotencyCoordinator`, the `IdempotencyRunner` the handlers `@Idempotent`
 * protects call through, `IdempotencyMetrics` and `IdempotencyHealthIndicator`.
 * Every `@Idempotent` route's policy is resolved and checked when the app
 * boots. Its errors are `HttpException`s (400, 409 with `Retry-After`, 422,
 * 503), answered by any app; register `ProblemDetailsFilter` to serve them as
 * `application/problem+json`.
 *
 * The module owns the store's lifecycle: it calls `store.connect()` at boot
 * (a Redis client created with `lazyConnect` is connected here), and on
 * shutdown waits for the executions still running to store their answers
 * (`drainTimeoutMs`, see {@link IdempotencyModule.drain}), then calls
 * `store.close()` under `closeStore`. A store that does not answer at boot
 * does not stop the app: it is logged, requests fail closed (503) and the
 * health indicator says `down` until the store answers.
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
 *
 * @public
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
        // The module's options are the coordinator's, its observers fanned out behind one.
        return new IdempotencyCoordinator({ ...options, observer: new FanOutObserver([metrics, ...(options.observers ?? [])]) });
      },
    },
    IdempotentRoutes,
    IdempotencyRunner,
    IdempotencyCallPipe,
    IdempotencyHealthIndicator,
  ],
  exports: [
    IdempotencyCoordinator,
    IdempotentRoutes,
    IdempotencyRunner,
    IdempotencyCallPipe,
    IdempotencyMetrics,
    IdempotencyHealthIndicator,
    IDEMPOTENCY_MODULE_OPTIONS,
  ],
})
export class IdempotencyModule extends IdempotencyConfigurableModule implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('IdempotencyModule');
  private draining: Promise<void> | undefined;

  /** @internal Made by Nest's injector. */
  constructor(
    @Inject(IDEMPOTENCY_MODULE_OPTIONS) private readonly options: IdempotencyModuleOptions,
    private readonly coordinator: IdempotencyCoordinator,
  ) {
    super();
  }

  /** Connects the store at boot; a store that does not answer is logged, not fatal. */
  async onModuleInit(): Promise<void> {
    try {
      await this.options.store.connect?.();
    } catch (error) {
      this.logger.warn(
        `${this.options.service}: the idempotency store did not answer at boot (${(error as Error).message}); ` +
          'requests fail closed until it does, and the health indicator says down',
      );
    }
  }

  /**
   * Wait, up to `drainTimeoutMs`, for the executions still running to store
   * their answers or give their keys back (see
   * `IdempotencyCoordinator.drain`). Then an HTTP execution whose handler
   * has ended but whose answer is still not whole is ended as its answer
   * watch would end it, while the store is open: a stored 500
   * result-not-stored, so its work is never run again (released, if its
   * handler threw). Those whose handlers still run, or that write their
   * answers themselves (`@Res()`), are logged: their keys stay held until
   * their leases end.
   *
   * Call it once the server has stopped taking requests and before anything
   * those handlers use is closed. A call while a drain runs shares it; a
   * later call drains again, so work begun since (a message consumer still
   * taking messages) is waited for too. An app that drains where its server
   * closes, then in this module's own hook, may so wait twice
   * `drainTimeoutMs` when an execution is stuck.
   *
   * NestJS runs `onApplicationShutdown` hooks root module first, after the
   * server closed: this module's own hook drains before it closes the
   * store, but an app module's hook that closes what a handler uses (a
   * database pool, a message client) runs before it. Await this first there,
   * or drain where the server closes (a Fastify `onClose` hook).
   */
  drain(): Promise<void> {
    this.draining ??= this.drainOnce().finally(() => (this.draining = undefined));
    return this.draining;
  }

  private async drainOnce(): Promise<void> {
    const timeoutMs = moduleSettings(this.options).drainTimeoutMs;
    if (await this.coordinator.drain(timeoutMs)) return;
    const { completed, released } = await this.coordinator.executions.giveUp();
    const { service } = this.options;
    if (completed + released > 0) {
      this.logger.warn(
        `${service}: ${completed + released} idempotent execution(s) whose handler had ended but whose answer was not whole ${timeoutMs} ms into shutdown ` +
          `ended there: ${completed} completed as a 500 result-not-stored (their work is not run again once it is stored), ${released} released (their handler threw)`,
      );
    }
    const running = this.coordinator.runningExecutions;
    if (running > 0) {
      this.logger.warn(
        `${service}: ${running} idempotent execution(s) still running ${timeoutMs} ms into shutdown; ` +
          'an answer not stored leaves its key held until its lease ends, and the retry after that runs it again',
      );
    }
  }

  /** Drains the running executions (see {@link IdempotencyModule.drain}), then closes the store under `closeStore`. */
  async onApplicationShutdown(): Promise<void> {
    await this.drain();
    if (this.options.closeStore) await this.options.store.close();
  }
}
