import { LoggingObserver } from '@idempotency-chain/idempotency';
import { IdempotencyModule, ProblemDetailsFilter } from '@idempotency-chain/idempotency/nest';
import { TracingObserver } from '@idempotency-chain/idempotency/opentelemetry';
import type { DynamicModule } from '@nestjs/common';
import { ConfigModule, ConfigService } from '@nestjs/config';
import { APP_FILTER } from '@nestjs/core';
import { TerminusModule } from '@nestjs/terminus';
import { LoggerModule, PinoLogger } from 'nestjs-pino';
import { validateConfig, type OrdersConfig } from './config.js';
import { HealthController } from './health.controller.js';
import { jsonLogs } from './logs.js';
import { MetricsController } from './metrics.controller.js';
import { idempotencyStore } from './store.js';

/**
 * What orders is, however it sends charges to payments: its configuration
 * (from `env`, default `process.env`, validated first), its logs, its
 * idempotency records, `/health` and `/metrics`, and problem documents.
 * `OrdersModule` (HTTP) and `QueuedOrdersModule` (RabbitMQ) each add the
 * controller and the client of their transport.
 *
 * @throws ConfigError naming the first bad variable.
 */
export async function ordersApp(
  env: Record<string, string | undefined> | undefined,
): Promise<Required<Pick<DynamicModule, 'imports' | 'controllers' | 'providers'>>> {
  const config = await ConfigModule.forRoot({
    isGlobal: true,
    ignoreEnvFile: true,
    skipProcessEnv: true,
    validate: (processEnv) => validateConfig(env ?? processEnv),
  });
  return {
    imports: [
      config,
      LoggerModule.forRootAsync({
        inject: [ConfigService],
        useFactory: (config: ConfigService<OrdersConfig, true>) => jsonLogs('orders', config.get('LOG_LEVEL', { infer: true })),
      }),
      IdempotencyModule.forRootAsync({
        inject: [ConfigService, PinoLogger],
        useFactory: (config: ConfigService<OrdersConfig, true>, logger: PinoLogger) => ({
          service: 'orders',
          // Only the gateway calls orders (`ServiceTokenGuard`), with keys derived from each customer's
          // record there (see the http-client's "Across tenants"): one scope, safely shared.
          scope: 'shared',
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
    controllers: [HealthController, MetricsController],
    providers: [{ provide: APP_FILTER, useClass: ProblemDetailsFilter }],
  };
}
