/**
 * The queue orders sends charge requests to payments on, when
 * `CHARGE_TRANSPORT=amqp`. Both sides declare it, so both take its
 * declaration from here: a mismatch makes the broker refuse the second
 * declaration with PRECONDITION_FAILED.
 */

/** The pattern a charge request is emitted and consumed under. */
export const CHARGE_PATTERN = 'payments.charge';

/** Where messages that can never succeed (no key, bad body, key reused) are kept for a human. */
export function deadLetterQueue(queue: string): string {
  return `${queue}.dead`;
}

/**
 * Durable, and a message the consumer rejects without requeue goes to
 * `<queue>.dead` through the default exchange instead of vanishing.
 */
export function chargeQueueOptions(queue: string) {
  return {
    durable: true,
    arguments: { 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': deadLetterQueue(queue) },
  };
}
