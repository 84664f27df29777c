import { IdempotentHttpClient } from '@idempotency-chain/http-client';
import { RequestContextMiddleware } from '@idempotency-chain/http-client/nest';
import { LoggingObserver } from '@idempotency-chain/idempotency';
import { IdempotencyModule, ProblemDetailsFilter } from '@idempotency-chain/idempotency/nest';
import { TracingObserver } from '@idempotency-chain/idempotency/opentelemetry';
import {
  callerCredentials,
  HealthController,
  idempotencyStore,
  MetricsController,
  nextHopClient,
  operationPolicy,
  serviceLogs,
  type ServiceConfig,
} from '@idempotency-chain/service-runtime';
import { type DynamicModule, type MiddlewareConsumer, Module, type NestModule } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { TerminusModule } from '@nestjs/terminus';
import { LoggerModule, PinoLogger } from 'nestjs-pino';
import { ChargePublisher } from './charge-publisher';
import { OrdersController, QueuedOrdersController } from './orders.controller';

/**
 * orders: `POST /orders` places an order and charges it through payments,
 * over HTTP, or over RabbitMQ under `CHARGE_TRANSPORT=amqp`.
 */
@Module({})
export class OrdersModule implements NestModule {
  static register(config: ServiceConfig): DynamicModule {
    const queued = config.chargeTransport === 'amqp';
    return {
      module: OrdersModule,
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
      controllers: [queued ? QueuedOrdersController : OrdersController, HealthController, MetricsController],
      providers: [
        queued
          ? { provide: ChargePublisher, inject: [PinoLogger], useFactory: (logger: PinoLogger) => new ChargePublisher(config, logger) }
          : { provide: IdempotentHttpClient, inject: [PinoLogger], useFactory: (logger: PinoLogger) => nextHopClient(config, logger) },
        callerCredentials(config.callers),
        { provide: APP_FILTER, useClass: ProblemDetailsFilter },
      ],
    };
  }

  /** The order's key (and deadline) travel with the charge, in its HTTP call or in its message. */
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(RequestContextMiddleware).forRoutes(OrdersController, QueuedOrdersController);
  }
}
