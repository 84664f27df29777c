import { LoggingObserver } from '@idempotency-chain/idempotency';
import { IdempotencyModule, ProblemDetailsFilter } from '@idempotency-chain/idempotency/nest';
import { TracingObserver } from '@idempotency-chain/idempotency/opentelemetry';
import { type DynamicModule, Module } from '@nestjs/common';
import { ConfigModule, ConfigService } from '@nestjs/config';
import { APP_FILTER, DiscoveryModule } from '@nestjs/core';
import { TerminusModule } from '@nestjs/terminus';
import { LoggerModule, PinoLogger } from 'nestjs-pino';
import { ChargesModule } from './charges.module.js';
import { validateConfig, type PaymentsConfig } from './config.js';
import { HealthController } from './health.controller.js';
import { jsonLogs } from './logs.js';
import { MetricsController } from './metrics.controller.js';
import { PaymentsController } from './payments.controller.js';
import { ChargeQueueModule } from './queue/charge-queue.module.js';
import { idempotencyStore } from './store.js';

/**
 * payments: `POST /charges` writes the ledger, once per key; `GET
 * /charges?orderId=` reads it; with the `queue/` folder's module, charge
 * requests also arrive from a queue, started by `attachMessageTransports`.
 */
@Module({})
export class PaymentsModule {
  /**
   * payments, configured from `env` (default: `process.env`), validated
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
      module: PaymentsModule,
      imports: [
        config,
        LoggerModule.forRootAsync({
          inject: [ConfigService],
          useFactory: (config: ConfigService<PaymentsConfig, true>) => jsonLogs('payments', config.get('LOG_LEVEL', { infer: true })),
        }),
        // Global: the queue's consumer, in a module of its own, is `@Idempotent` too.
        IdempotencyModule.forRootAsync({
          isGlobal: true,
          inject: [ConfigService, PinoLogger],
          useFactory: (config: ConfigService<PaymentsConfig, true>, logger: PinoLogger) => ({
            service: 'payments',
            // Only orders calls payments (with PAYMENTS_TOKEN, over HTTP and on each message), with keys
            // derived from its own records, so from each customer's (see the http-client's "Across tenants"): one scope, safely shared.
            scope: 'shared',
            store: idempotencyStore(config),
            defaults: {
              leaseMs: config.get('IDEMPOTENCY_LEASE_MS', { infer: true }),
              retentionMs: config.get('IDEMPOTENCY_RETENTION_MS', { infer: true }),
              inFlight: config.get('IN_FLIGHT', { infer: true }),
              onStoreFailure: config.get('IDEMPOTENCY_ON_STORE_FAILURE', { infer: true }),
              // The charge is written in the transaction that completes its record.
              transactional: true,
            },
            // Logs carry the key's hash and outcome; traces too, when tracing is on (a no-op otherwise).
            observers: [new LoggingObserver(logger), new TracingObserver()],
            closeStore: true,
          }),
        }),
        TerminusModule,
        // `attachMessageTransports` finds the transports a module provides through it.
        DiscoveryModule,
        ChargesModule,
        // Charges from a queue (CHARGE_TRANSPORT): an app that takes only HTTP deletes this line and the queue/ folder.
        ChargeQueueModule.forRoot(env ?? process.env),
      ],
      controllers: [PaymentsController, HealthController, MetricsController],
      providers: [{ provide: APP_FILTER, useClass: ProblemDetailsFilter }],
    };
  }
}
