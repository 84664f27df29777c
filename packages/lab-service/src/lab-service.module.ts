import { IdempotencyModule, ProblemDetailsFilter, type KeyMode, type Scope } from '@idempotency-chain/idempotency/nest';
import { RequestContextMiddleware } from '@idempotency-chain/http-client/nest';
import {
  type DynamicModule,
  Inject,
  type MiddlewareConsumer,
  Module,
  type NestModule,
  type OnModuleInit,
  type Provider,
} from '@nestjs/common';
import { APP_FILTER, APP_INTERCEPTOR } from '@nestjs/core';
import { TerminusModule } from '@nestjs/terminus';
import { LoggerModule, PinoLogger } from 'nestjs-pino';
import type { OperationPolicy } from '@idempotency-chain/idempotency';
import type { ServiceConfig } from './config';
import { createDownstreamClient } from './downstream';
import { HealthController } from './health.controller';
import { LabFaults } from './lab-faults';
import { LabFaultsController } from './lab-faults.controller';
import { LostReplyInterceptor } from './lost-reply.interceptor';
import { MetricsController } from './metrics.controller';
import { loggerParams, loggingObserver } from './observability';
import { createStore, type StoreBinding } from './store.factory';
import { DOWNSTREAM, SERVICE_CONFIG, STORE } from './tokens';

/**
 * How a service protects its routes under each lab policy. The gateway is
 * the outermost hop: with no key from the caller it falls back to the
 * request's fingerprint under `propagated`, and can only pass through
 * under `per-attempt`, where the caller sends none.
 */
export function serverKeyMode(config: ServiceConfig): KeyMode {
  switch (config.keyPolicy) {
    case 'none':
      return 'none';
    case 'fingerprint':
      return 'fingerprint';
    case 'per-attempt':
      return config.service === 'gateway' ? 'optional' : 'required';
    case 'propagated':
      return config.service === 'gateway' ? 'fingerprint' : 'required';
  }
}

/**
 * Whose records a request may see. The gateway is where customers come in:
 * their checkouts are scoped by the account they pay from (a real gateway
 * takes it from the authenticated principal; the lab has no login). Orders
 * and payments are called only by the hop before them, which forwards the
 * customer's key: one shared scope, on purpose.
 */
export function idempotencyScope(config: ServiceConfig): Scope {
  if (config.service !== 'gateway') return 'shared';
  return (context) => context.switchToHttp().getRequest<{ body?: { account?: unknown } }>().body?.account as string | undefined;
}

/** The operations' policy: the configured one, with any naive variant the lab switched on. */
export function idempotencyPolicy(config: ServiceConfig): Partial<OperationPolicy> {
  return {
    leaseMs: config.leaseMs,
    retentionMs: config.retentionMs,
    inFlight: config.inFlight,
    onStoreFailure: config.onStoreFailure,
    // On Postgres the action's writes commit with the record's completion.
    ...(config.store === 'postgres' ? { transactional: true } : {}),
    ...(config.naive.has('no-heartbeat') ? { heartbeatMs: 0 } : {}),
    ...(config.naive.has('cache-failures') ? { isFinal: () => true } : {}),
  };
}

/**
 * Everything a lab service has besides its own controller: validated
 * config, the idempotency store and module, logs, health, metrics, the
 * client for the next hop, and - only under `LAB_FAULTS=1` - fault hooks.
 */
@Module({})
export class LabServiceModule implements NestModule, OnModuleInit {
  constructor(@Inject(STORE) private readonly binding: StoreBinding, private readonly logger: PinoLogger) {}

  /**
   * Connect to the store before serving. A store that does not answer yet
   * is not fatal: requests fail closed (503) and health says so until it does.
   */
  async onModuleInit(): Promise<void> {
    await this.binding.connect().catch((error: unknown) => this.logger.warn({ err: error }, 'store not reachable at start'));
  }

  static register(config: ServiceConfig): DynamicModule {
    const binding = createStore(config);
    const providers: Provider[] = [
      { provide: SERVICE_CONFIG, useValue: config },
      { provide: STORE, useValue: binding },
      LabFaults,
      { provide: APP_FILTER, useClass: ProblemDetailsFilter },
    ];
    if (config.downstreamUrl) {
      providers.push({
        provide: DOWNSTREAM,
        useFactory: (logger: PinoLogger) => createDownstreamClient(config, logger.logger),
        inject: [PinoLogger],
      });
    }
    if (config.labFaults) providers.push({ provide: APP_INTERCEPTOR, useClass: LostReplyInterceptor });
    return {
      module: LabServiceModule,
      global: true,
      imports: [
        LoggerModule.forRoot(loggerParams(config)),
        TerminusModule,
        IdempotencyModule.forRootAsync({
          useFactory: (logger: PinoLogger) => ({
            service: config.service,
            store: binding.store,
            keyMode: serverKeyMode(config),
            scope: idempotencyScope(config),
            defaults: idempotencyPolicy(config),
            observers: [loggingObserver(logger.logger)],
            closeStore: true,
          }),
          inject: [PinoLogger],
        }),
      ],
      controllers: [HealthController, MetricsController, ...(config.labFaults ? [LabFaultsController] : [])],
      providers,
      exports: [SERVICE_CONFIG, STORE, DOWNSTREAM, LabFaults, IdempotencyModule].filter(
        (token) => token !== DOWNSTREAM || config.downstreamUrl,
      ),
    };
  }

  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(RequestContextMiddleware).forRoutes('*');
  }
}

export type { StoreBinding };
