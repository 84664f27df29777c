/**
 * orders' public modules: one per transport, the token of its client's
 * options, the publisher a harness may extend to choose the key its
 * messages carry, and the queue contract payments must declare alike.
 * `./main` starts it as a process.
 */
export { ChargePublisher } from './charge-publisher';
export { CHARGE_PATTERN, chargeQueueOptions } from './charge-queue';
export { ConfigError } from './config';
export { OrdersModule } from './orders.module';
export { PAYMENTS_CLIENT_OPTIONS } from './payments.client';
export { QueuedOrdersModule } from './queued-orders.module';
