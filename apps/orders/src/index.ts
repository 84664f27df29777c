/**
 * orders' public modules: one per transport, the token of its client's
 * options, and the publisher a harness may extend to choose the key its
 * messages carry. `./main` starts it as a process.
 */
export { ChargePublisher } from './charge-publisher';
export { ConfigError } from './config';
export { OrdersModule } from './orders.module';
export { PAYMENTS_CLIENT_OPTIONS } from './payments.client';
export { QueuedOrdersModule } from './queued-orders.module';
