import { RequestContextMiddleware } from '@idempotency-chain/http-client/nest';
import { LoggingObserver } from '@idempotency-chain/idempotency';
import { IdempotencyModule, principalScope, ProblemDetailsFilter } from '@idempotency-chain/idempotency/nest';
import { TracingObserver } from '@idempotency-chain/idempotency/opentelemetry';
import { type DynamicModule, type MiddlewareConsumer, Module, type NestModule } from '@nestjs/common';
import { ConfigModule, ConfigService } from '@nestjs/config';
import { APP_FILTER } from '@nestjs/core';
import { TerminusModule } from '@nestjs/terminus';
import { LoggerModule, PinoLogger } from 'nestjs-pino';
import { CheckoutController } from './checkout.controller.js';
import { validateConfig, type GatewayConfig } from './config.js';
import { HealthController } from './health.controller.js';
import { jsonLogs } from './logs.js';
import { MetricsController } from './metrics.controller.js';
import { ordersClient } from './orders.client.js';
import { idempotencyStore } from './store.js';

/** gateway: `POST /checkout`, where the customer's intent enters the chain; calls orders. */
@Module({})
export class GatewayModule implements NestModule {
  /**
   * The gateway, configured from `env` (default: `process.env`), validated
   * before anything is built.
   *
   * @throws ConfigError naming the first bad variable.
   */
  static async forRoot(env?: Record<string, string | undefined>): Promise<DynamicModule> {
    const config = await ConfigModule.forRoot({
      isGlobal: true,
      ignoreEnvFile: true,
      skipProcessEnv: true,
      validate: (processEnv) => validateConfig(env ?? processEnv),
    });
    return {
      module: GatewayModule,
      imports: [
        config,
        LoggerModule.forRootAsync({
          inject: [ConfigService],
          useFactory: (config: ConfigService<GatewayConfig, true>) => jsonLogs('gateway', config.get('LOG_LEVEL', { infer: true })),
        }),
        IdempotencyModule.forRootAsync({
          inject: [ConfigService, PinoLogger],
          useFactory: (config: ConfigService<GatewayConfig, true>, logger: PinoLogger) => ({
            service: 'gateway',
            // Whose records a checkout may see: its authenticated customer's (`user:acct-7`, left by
            // `ApiKeyGuard`). The scope also binds the keys sent to orders, so two customers sending
            // one key (or one order id) never share a record further down.
            scope: principalScope,
            // A checkout sent without a key is keyed on its fingerprint: method, path and body.
            keyMode: 'fingerprint',
            store: idempotencyStore(config),
            defaults: {
              leaseMs: config.get('IDEMPOTENCY_LEASE_MS', { infer: true }),
              retentionMs: config.get('IDEMPOTENCY_RETENTION_MS', { infer: true }),
              inFlight: config.get('IN_FLIGHT', { infer: true }),
              onStoreFailure: config.get('IDEMPOTENCY_ON_STORE_FAILURE', { infer: true }),
            },
            // Logs carry the key's hash and outcome; traces too, when tracing is on (a no-op otherwise).
            observers: [new LoggingObserver(logger), new TracingObserver()],
            closeStore: true,
          }),
        }),
        TerminusModule,
      ],
      controllers: [CheckoutController, HealthController, MetricsController],
      providers: [...ordersClient, { provide: APP_FILTER, useClass: ProblemDetailsFilter }],
    };
  }

  /** The checkout's key (and deadline) travel with every call to orders made while handling it. */
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(RequestContextMiddleware).forRoutes(CheckoutController);
  }
}
