import { LoggingObserver } from '@idempotency-chain/idempotency';
import { IdempotencyModule, ProblemDetailsFilter } from '@idempotency-chain/idempotency/nest';
import { TracingObserver } from '@idempotency-chain/idempotency/opentelemetry';
import { type DynamicModule, Module } from '@nestjs/common';
import { ConfigModule, ConfigService } from '@nestjs/config';
import { APP_FILTER } from '@nestjs/core';
import { TerminusModule } from '@nestjs/terminus';
import { LoggerModule, PinoLogger } from 'nestjs-pino';
import { ChargesConsumer } from './charges.consumer.js';
import { ChargeService } from './charges.service.js';
import { ChargeConsumerHealth } from './charges.transport.js';
import { validateConfig, type PaymentsConfig } from './config.js';
import { HealthController, TRANSPORT_HEALTH_CHECKS } from './health.controller.js';
import { ledgerProvider } from './ledger.provider.js';
import { jsonLogs } from './logs.js';
import { MetricsController } from './metrics.controller.js';
import { PaymentsController } from './payments.controller.js';
import { ServiceToken } from './service-token.guard.js';
import { idempotencyStore } from './store.js';

/**
 * payments: `POST /charges` writes the ledger, once per key; `GET
 * /charges?orderId=` reads it; under `CHARGE_TRANSPORT=amqp` charge
 * requests also arrive from RabbitMQ (`ChargesConsumer`, started by
 * `consumeChargesWhenQueued`).
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
        IdempotencyModule.forRootAsync({
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
      ],
      // ChargesConsumer's handler is called only once `consumeChargesWhenQueued` has attached the consumer (`CHARGE_TRANSPORT=amqp`).
      controllers: [PaymentsController, ChargesConsumer, HealthController, MetricsController],
      providers: [
        ledgerProvider,
        ChargeService,
        // PAYMENTS_TOKEN, checked on each HTTP request (ServiceTokenGuard) and each message (MessageTokenInterceptor).
        ServiceToken,
        { provide: APP_FILTER, useClass: ProblemDetailsFilter },
        // Under CHARGE_TRANSPORT=amqp /health checks the consumer's broker too.
        ChargeConsumerHealth,
        {
          provide: TRANSPORT_HEALTH_CHECKS,
          inject: [ConfigService, ChargeConsumerHealth],
          useFactory: (config: ConfigService<PaymentsConfig, true>, consumer: ChargeConsumerHealth) =>
            config.get('CHARGE_TRANSPORT', { infer: true }) === 'amqp' ? [() => consumer.isHealthy('broker')] : [],
        },
      ],
    };
  }
}
