/** The contract between the chain's services: the order, its answer, the charge queue. */
export { OrderPaymentDto } from './order-payment.dto';
export type { PaidOrder } from './order-payment.dto';
export {
  CHARGE_PATTERN,
  chargeQueueOptions,
  deadLetterQueue,
  declareChargeQueues,
  deleteChargeQueues,
  redactedUrl,
  withBrokerChannel,
} from './charge-queue';
