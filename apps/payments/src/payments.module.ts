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
import { type DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { TerminusModule } from '@nestjs/terminus';
import { LoggerModule, PinoLogger } from 'nestjs-pino';
import { ChargesConsumer } from './charges.consumer';
import { ChargeService } from './charges.service';
import { ledgerProvider } from './ledger.provider';
import { PaymentsController } from './payments.controller';

/**
 * payments: `POST /charges` writes the ledger, once per key; `GET
 * /charges?orderId=` reads it; under `CHARGE_TRANSPORT=amqp` charge
 * requests also arrive from RabbitMQ.
 */
@Module({})
export class PaymentsModule {
  static register(config: ServiceConfig): DynamicModule {
    return {
      module: PaymentsModule,
      imports: [
        LoggerModule.forRoot(serviceLogs(config)),
        IdempotencyModule.forRootAsync({
          inject: [PinoLogger],
          useFactory: (logger: PinoLogger) => ({
            service: 'payments',
            // Only orders calls payments (`CallerGuard` over HTTP, the broker's credentials over RabbitMQ), with keys
            // derived from its own records, so from each customer's (see the http-client's "Across tenants"): one scope, safely shared.
            scope: 'shared',
            store: idempotencyStore(config),
            // On PostgreSQL the charge is written in the transaction that completes its record.
            defaults: { ...operationPolicy(config), transactional: config.store === 'postgres' },
            // Logs carry the key's hash and outcome; traces too, when tracing is on (a no-op otherwise).
            observers: [new LoggingObserver(logger), new TracingObserver()],
            closeStore: true,
          }),
        }),
        TerminusModule,
      ],
      controllers: [
        PaymentsController,
        ...(config.chargeTransport === 'amqp' ? [ChargesConsumer] : []),
        HealthController,
        MetricsController,
      ],
      providers: [
        ledgerProvider(config),
        ChargeService,
        callerCredentials(config.callers),
        { provide: APP_FILTER, useClass: ProblemDetailsFilter },
      ],
    };
  }
}
