import { GatewayModule } from '@idempotency-chain/gateway';
import { OrdersModule, QueuedOrdersModule } from '@idempotency-chain/orders';
import { consumeChargesWhenQueued, PaymentsModule } from '@idempotency-chain/payments';
import type { RunOptions, ServiceConfig, ServiceName } from '@idempotency-chain/service-runtime';
import type { DynamicModule } from '@nestjs/common';

/** One service of the chain, as its own `main.ts` starts it. */
export interface ChainService {
  /** The app's root module, for this configuration. */
  module(config: ServiceConfig): DynamicModule;
  beforeListen?: RunOptions['beforeListen'];
}

/** The three services, outermost first. */
export const CHAIN: Readonly<Record<ServiceName, ChainService>> = {
  gateway: { module: (config) => GatewayModule.register(config) },
  // orders has one module per transport: the lab picks it by `CHARGE_TRANSPORT`, as a team would pick the one it copies.
  orders: { module: (config) => (config.chargeTransport === 'amqp' ? QueuedOrdersModule : OrdersModule).register(config) },
  payments: { module: (config) => PaymentsModule.register(config), beforeListen: consumeChargesWhenQueued },
};

/** Whether `name` is one of the chain's services. */
export function isServiceName(name: unknown): name is ServiceName {
  return typeof name === 'string' && Object.hasOwn(CHAIN, name);
}
