import { IdempotentHttpClient } from '@idempotency-chain/http-client';
import { RequestContextMiddleware } from '@idempotency-chain/http-client/nest';
import { LoggingObserver } from '@idempotency-chain/idempotency';
import { IdempotencyModule, principalScope, ProblemDetailsFilter } from '@idempotency-chain/idempotency/nest';
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
import { CheckoutController } from './checkout.controller';

/** gateway: `POST /checkout`, where the customer's intent enters the chain; calls orders. */
@Module({})
export class GatewayModule implements NestModule {
  static register(config: ServiceConfig): DynamicModule {
    return {
      module: GatewayModule,
      imports: [
        LoggerModule.forRoot(serviceLogs(config)),
        IdempotencyModule.forRootAsync({
          inject: [PinoLogger],
          useFactory: (logger: PinoLogger) => ({
            service: 'gateway',
            // Whose records a checkout may see: its authenticated caller's (`user:acct-7`, left by
            // `CallerGuard`). The scope also binds the keys sent to orders, so two customers sending
            // one key (or one order id) never share a record further down.
            scope: principalScope,
            // A checkout sent without a key is keyed on its fingerprint: method, path and body.
            keyMode: 'fingerprint',
            store: idempotencyStore(config),
            defaults: operationPolicy(config),
            // Logs carry the key's hash and outcome; traces too, when tracing is on (a no-op otherwise).
            observers: [new LoggingObserver(logger), new TracingObserver()],
            closeStore: true,
          }),
        }),
        TerminusModule,
      ],
      controllers: [CheckoutController, HealthController, MetricsController],
      providers: [
        { provide: IdempotentHttpClient, inject: [PinoLogger], useFactory: (logger: PinoLogger) => nextHopClient(config, logger) },
        callerCredentials(config.callers),
        { provide: APP_FILTER, useClass: ProblemDetailsFilter },
      ],
    };
  }

  /** The checkout's key (and deadline) travel with every call to orders made while handling it. */
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(RequestContextMiddleware).forRoutes(CheckoutController);
  }
}
