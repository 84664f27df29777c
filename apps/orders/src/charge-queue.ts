/**
 * The queue contract with payments' consumer (`QueuedOrdersModule`): the
 * pattern a charge request is emitted under, and the queue's declaration.
 * Both sides declare the queue; a declaration that differs makes the broker
 * refuse the second one with PRECONDITION_FAILED, so these must stay as
 * payments declares them (in this repository, `lab/src/charge-queue.contract.test.ts`
 * pins them to payments').
 */

/** The pattern a charge request is emitted and consumed under. */
export const CHARGE_PATTERN = 'payments.charge';

/**
 * The message header that carries payments' service token, `PAYMENTS_TOKEN`,
 * as `Bearer <token>` (as `Authorization` does over HTTP): payments
 * dead-letters a message without it unread.
 */
export const CHARGE_TOKEN_HEADER = 'authorization';

/** Durable; a message payments rejects for good goes to `<queue>.dead` through the default exchange. */
export function chargeQueueOptions(queue: string) {
  return {
    durable: true,
    arguments: { 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': `${queue}.dead` },
  };
}
