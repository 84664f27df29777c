import { connect, type ChannelWrapper } from 'amqp-connection-manager';

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

/** The broker's URL without its password, for messages. */
export function redactedUrl(url: string): string {
  const parsed = new URL(url);
  if (parsed.password) parsed.password = '***';
  return parsed.toString();
}

/**
 * Run `fn` on a short-lived channel: fails within `timeoutMs` when the broker
 * does not answer, instead of retrying forever as a consumer would.
 */
export async function withBrokerChannel<T>(url: string, fn: (channel: ChannelWrapper) => Promise<T>, timeoutMs = 3000): Promise<T> {
  const manager = connect([url], { reconnectTimeInSeconds: 0.2, connectionOptions: { timeout: timeoutMs } });
  manager.on('connectFailed', () => undefined);
  try {
    try {
      await manager.connect({ timeout: timeoutMs });
    } catch (error) {
      throw new Error(`RabbitMQ not reachable at ${redactedUrl(url)}: ${(error as Error).message}`, { cause: error });
    }
    const channel = manager.createChannel({ json: false });
    try {
      await channel.waitForConnect();
      return await fn(channel);
    } finally {
      await channel.close();
    }
  } finally {
    await manager.close();
  }
}

/** Declare the charge queue and its dead-letter queue (idempotent at the broker). */
export function declareChargeQueues(url: string, queue: string): Promise<void> {
  return withBrokerChannel(url, async (channel) => {
    await channel.assertQueue(deadLetterQueue(queue), { durable: true });
    await channel.assertQueue(queue, chargeQueueOptions(queue));
  });
}

/** Remove a charge queue (a test's or a lab run's own) and its dead letters, with whatever they still hold. */
export function deleteChargeQueues(url: string, queue: string): Promise<void> {
  return withBrokerChannel(url, async (channel) => {
    await channel.deleteQueue(queue);
    await channel.deleteQueue(deadLetterQueue(queue));
  });
}
