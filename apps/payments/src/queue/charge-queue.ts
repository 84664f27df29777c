import { connect } from 'amqp-connection-manager';
import { UnreachableError } from '../unreachable.js';

/**
 * The queue contract with orders (`CHARGE_TRANSPORT=amqp`): the pattern a
 * charge request is emitted under, and the queue's declaration. Both sides
 * declare the queue; a declaration that differs makes the broker refuse the
 * second one with PRECONDITION_FAILED, so these must stay as orders declares
 * them (`charge-queue.contract.test.ts` pins them).
 */

/** The pattern a charge request is emitted and consumed under. */
export const CHARGE_PATTERN = 'payments.charge';

/**
 * The message header that carries the hop's service token, `PAYMENTS_TOKEN`,
 * as `Bearer <token>` (as `Authorization` does over HTTP): a message without
 * it is dead-lettered unread (`MessageTokenInterceptor`).
 */
export const CHARGE_TOKEN_HEADER = 'authorization';

/** Where messages that can never succeed (no key, bad body, key reused) are kept for a human. */
export function deadLetterQueue(queue: string): string {
  return `${queue}.dead`;
}

/** Durable; a message payments rejects for good goes to `<queue>.dead` through the default exchange. */
export function chargeQueueOptions(queue: string) {
  return {
    durable: true,
    arguments: { 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': deadLetterQueue(queue) },
  };
}

/** Longest wait for the broker at boot: the consumer does not start against a broker that does not answer. */
const BROKER_TIMEOUT_MS = 3000;

/**
 * Declare the charge queue and its dead-letter queue (idempotent at the
 * broker), on a short-lived connection that fails within
 * `BROKER_TIMEOUT_MS` instead of retrying forever as a consumer would.
 *
 * @throws UnreachableError naming the broker (without its password) when it does not answer.
 */
export async function declareChargeQueues(url: string, queue: string): Promise<void> {
  const manager = connect([url], { reconnectTimeInSeconds: 0.2, connectionOptions: { timeout: BROKER_TIMEOUT_MS } });
  manager.on('connectFailed', () => undefined);
  try {
    try {
      await manager.connect({ timeout: BROKER_TIMEOUT_MS });
    } catch (error) {
      throw new UnreachableError('RabbitMQ', url, error);
    }
    const channel = manager.createChannel({ json: false });
    try {
      await channel.waitForConnect();
      await channel.assertQueue(deadLetterQueue(queue), { durable: true });
      await channel.assertQueue(queue, chargeQueueOptions(queue));
    } finally {
      await channel.close();
    }
  } finally {
    await manager.close();
  }
}
