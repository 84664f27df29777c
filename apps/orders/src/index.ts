/**
 * orders' public modules: one per transport, the token of its client's
 * options, the publisher and the requester a harness may extend to choose
 * the key their messages carry, and the queue contract payments must declare alike.
 * `./main` starts it as a process.
 */
export { ChargePublisher } from './charge-publisher.js';
export { CHARGE_PATTERN, CHARGE_TOKEN_HEADER, chargeQueueOptions } from './charge-queue.js';
export { ConfigError } from './config.js';
export { NatsChargeRequester } from './nats-charge-requester.js';
export { NatsOrdersModule } from './nats-orders.module.js';
export { OrdersModule } from './orders.module.js';
export { PAYMENTS_CLIENT_OPTIONS } from './payments.client.js';
export { QueuedOrdersModule } from './queued-orders.module.js';
