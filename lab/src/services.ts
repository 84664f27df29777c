import { GatewayModule } from '@idempotency-chain/gateway';
import { OrdersModule, QueuedOrdersModule } from '@idempotency-chain/orders';
import { consumeChargesWhenQueued, PaymentsModule } from '@idempotency-chain/payments';
import { loadConfig, type ServiceConfig } from '@idempotency-chain/service-runtime';
import type { DynamicModule } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { LabConfig } from './lab-config';

/** The three services of the chain. */
export type ServiceName = 'gateway' | 'orders' | 'payments';

/** The environment a service is configured from. */
export type Environment = Record<string, string | undefined>;

/** One service's app, as its own `main.ts` builds it from an environment. */
export interface ChainApp {
  /** The app's root module, its configuration validated. */
  root: DynamicModule;
  /** Where it listens, as its configuration says, once `app` is built from `root`. */
  address(app: NestFastifyApplication): { port: number; host: string };
  /** What its `main.ts` does between creating the app and listening. */
  beforeListen?(app: NestFastifyApplication): Promise<void>;
  /** payments' configuration, which the lab's ledgers read, until payments reads its own through `@nestjs/config`. */
  config?: ServiceConfig;
}

/** Where an app configured by `@nestjs/config` listens: its `PORT` and `HOST`. */
function configuredAddress(app: NestFastifyApplication): { port: number; host: string } {
  const config = app.get(ConfigService);
  return { port: config.getOrThrow<number>('PORT'), host: config.getOrThrow<string>('HOST') };
}

/**
 * The three services, outermost first, each built from `env` as its own
 * `main.ts` builds it from `process.env` (orders' module chosen by the lab). Rejects with the app's
 * `ConfigError` (its one-line message) when `env` is not valid.
 */
export const CHAIN: Readonly<Record<ServiceName, (env: Environment, lab: LabConfig) => Promise<ChainApp>>> = {
  gateway: async (env) => ({ root: await GatewayModule.forRoot(env), address: configuredAddress }),
  // orders has one module per transport: the lab picks it by `CHARGE_TRANSPORT`, as a team would pick the one it copies.
  orders: async (env, lab) => ({
    root: await (lab.chargeTransport === 'amqp' ? QueuedOrdersModule : OrdersModule).forRoot(env),
    address: configuredAddress,
  }),
  payments: async (env) => {
    const config = loadConfig('payments', env);
    return {
      root: PaymentsModule.register(config),
      address: () => ({ port: config.port, host: config.host }),
      beforeListen: (app) => consumeChargesWhenQueued(app, config),
      config,
    };
  },
};

/** Whether `name` is one of the chain's services. */
export function isServiceName(name: unknown): name is ServiceName {
  return typeof name === 'string' && Object.hasOwn(CHAIN, name);
}
