import { IdempotentHttpClient } from '@idempotency-chain/http-client';
import { RequestContextMiddleware } from '@idempotency-chain/http-client/nest';
import { LoggingObserver } from '@idempotency-chain/idempotency';
import { IdempotencyModule, ProblemDetailsFilter } from '@idempotency-chain/idempotency/nest';
import { TracingObserver } from '@idempotency-chain/idempotency/opentelemetry';
import {
  HealthController,
  idempotencyStore,
  MetricsController,
  nextHopClient,
  operationPolicy,
  serviceLogs,
  type ServiceConfig,
} from '@idempotency-chain/service-runtime';
import { type DynamicModule, type ExecutionContext, type MiddlewareConsumer, Module, type NestModule } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { TerminusModule } from '@nestjs/terminus';
import { LoggerModule, PinoLogger } from 'nestjs-pino';
import { CheckoutController } from './checkout.controller';

/**
 * Whose records a checkout may see: those of the account it pays from,
 * typed (`account:acct-7`) like `principalScope`'s. A real gateway takes its
 * authenticated principal (the default scope); this one has no login. The
 * scope also binds the keys sent to orders, so two accounts sending one key
 * (or one order id) never share a record further down.
 */
const byAccount = (context: ExecutionContext) => {
  const account = context.switchToHttp().getRequest<{ body?: { account?: unknown } }>().body?.account;
  return typeof account === 'string' && account !== '' ? `account:${account}` : undefined;
};

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
            scope: byAccount,
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
        { provide: APP_FILTER, useClass: ProblemDetailsFilter },
      ],
    };
  }

  /** The checkout's key (and deadline) travel with every call to orders made while handling it. */
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(RequestContextMiddleware).forRoutes(CheckoutController);
  }
}
