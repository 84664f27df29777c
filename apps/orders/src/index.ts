/**
 * orders' public modules: one per transport, the token of its client's
 * options, the publisher a harness may extend to choose the key its
 * messages carry, and the queue contract payments must declare alike.
 * `./main` starts it as a process.
 */
export { ChargePublisher } from './charge-publisher.js';
export { CHARGE_PATTERN, CHARGE_TOKEN_HEADER, chargeQueueOptions } from './charge-queue.js';
export { ConfigError } from './config.js';
export { OrdersModule } from './orders.module.js';
export { PAYMENTS_CLIENT_OPTIONS } from './payments.client.js';
export { QueuedOrdersModule } from './queued-orders.module.js';
