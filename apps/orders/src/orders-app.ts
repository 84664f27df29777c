import { LoggingObserver } from '@idempotency-chain/idempotency';
import { IdempotencyModule, ProblemDetailsFilter } from '@idempotency-chain/idempotency/nest';
import { TracingObserver } from '@idempotency-chain/idempotency/opentelemetry';
import {
  callerCredentials,
  HealthController,
  idempotencyStore,
  MetricsController,
  operationPolicy,
  serviceLogs,
  type ServiceConfig,
} from '@idempotency-chain/service-runtime';
import type { DynamicModule } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { TerminusModule } from '@nestjs/terminus';
import { LoggerModule, PinoLogger } from 'nestjs-pino';

/**
 * What orders is, however it sends charges to payments: its logs, its
 * idempotency records, `/health` and `/metrics`, its callers' credentials
 * and problem documents. `OrdersModule` (HTTP) and `QueuedOrdersModule`
 * (RabbitMQ) each add the controller and the client of their transport.
 */
export function ordersApp(config: ServiceConfig): Required<Pick<DynamicModule, 'imports' | 'controllers' | 'providers'>> {
  return {
    imports: [
      LoggerModule.forRoot(serviceLogs(config)),
      IdempotencyModule.forRootAsync({
        inject: [PinoLogger],
        useFactory: (logger: PinoLogger) => ({
          service: 'orders',
          // Only the gateway calls orders (`CallerGuard`: the hop's service token), with keys derived from each
          // customer's record there (see the http-client's "Across tenants"): one scope, safely shared.
          scope: 'shared',
          store: idempotencyStore(config),
          defaults: operationPolicy(config),
          // Logs carry the key's hash and outcome; traces too, when tracing is on (a no-op otherwise).
          observers: [new LoggingObserver(logger), new TracingObserver()],
          closeStore: true,
        }),
      }),
      TerminusModule,
    ],
    controllers: [HealthController, MetricsController],
    providers: [callerCredentials(config.callers), { provide: APP_FILTER, useClass: ProblemDetailsFilter }],
  };
}
