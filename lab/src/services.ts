import { GatewayModule } from '@idempotency-chain/gateway';
import { NatsOrdersModule, OrdersModule, QueuedOrdersModule } from '@idempotency-chain/orders';
import { attachMessageTransports, PaymentsModule } from '@idempotency-chain/payments';
import type { DynamicModule } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { environmentReader } from './environment';
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
  /**
   * payments on a store it refuses (it requires PostgreSQL), which the lab
   * runs it on to count charges: the store `IDEMPOTENCY_STORE` names, where
   * the lab keeps payments' records and its ledger instead (see `createLabApp`).
   */
  labStore?: LabStore;
}

/** Where the lab keeps payments' records and ledger on a store payments refuses: in this process, or in Redis. */
export type LabStore = { store: 'memory' } | { store: 'redis'; redisUrl: string };

/**
 * The store payments' environment names (`IDEMPOTENCY_STORE`, default
 * `postgres`, as payments' own), when it is one payments refuses; and the
 * environment payments is built from: without that variable then, so that
 * payments validates the rest as it would on PostgreSQL.
 */
function paymentsStore(env: Environment): { env: Environment; labStore?: LabStore } {
  const read = environmentReader(env);
  const store = read.oneOf('IDEMPOTENCY_STORE', ['memory', 'redis', 'postgres'], 'postgres');
  if (store === 'postgres') return { env };
  const labStore: LabStore =
    store === 'memory' ? { store } : { store, redisUrl: read.url('REDIS_URL', 'redis://127.0.0.1:6379', ['redis:', 'rediss:']) };
  return { env: { ...env, IDEMPOTENCY_STORE: undefined }, labStore };
}

/** Where an app configured by `@nestjs/config` listens: its `PORT` and `HOST`. */
function configuredAddress(app: NestFastifyApplication): { port: number; host: string } {
  const config = app.get(ConfigService);
  return { port: config.getOrThrow<number>('PORT'), host: config.getOrThrow<string>('HOST') };
}

/** orders' module per `CHARGE_TRANSPORT`. */
const ORDERS_MODULES = { http: OrdersModule, amqp: QueuedOrdersModule, nats: NatsOrdersModule } as const;

/**
 * The three services, outermost first, each built from `env` as its own
 * `main.ts` builds it from `process.env` (orders' module chosen by the lab). Rejects with the app's
 * `ConfigError` (its one-line message) when `env` is not valid.
 */
export const CHAIN: Readonly<Record<ServiceName, (env: Environment, lab: LabConfig) => Promise<ChainApp>>> = {
  gateway: async (env) => ({ root: await GatewayModule.forRoot(env), address: configuredAddress }),
  // orders has one module per transport: the lab picks it by `CHARGE_TRANSPORT`, as a team would pick the one it copies.
  orders: async (env, lab) => ({
    root: await ORDERS_MODULES[lab.chargeTransport].forRoot(env),
    address: configuredAddress,
  }),
  payments: async (env) => {
    const { env: own, labStore } = paymentsStore(env);
    return {
      root: await PaymentsModule.forRoot(own),
      address: configuredAddress,
      beforeListen: attachMessageTransports,
      ...(labStore && { labStore }),
    };
  },
};

/** Whether `name` is one of the chain's services. */
export function isServiceName(name: unknown): name is ServiceName {
  return typeof name === 'string' && Object.hasOwn(CHAIN, name);
}
