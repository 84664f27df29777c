/**
 * The queue's contract with orders and the lab (`@idempotency-chain/payments/queue`):
 * the pattern, the headers and the queue's declaration, and the delivery
 * the consumer settles. Apart from the root index, so that an app without
 * this folder exports nothing of it.
 */
export { CHARGE_PATTERN, CHARGE_TOKEN_HEADER, chargeQueueOptions, deadLetterQueue } from './charge-queue.js';
export type { Delivery } from './message-ack.interceptor.js';
