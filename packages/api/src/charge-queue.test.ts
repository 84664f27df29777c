import { randomUUID } from 'node:crypto';
import { deadLetterQueue, declareChargeQueues, deleteChargeQueues, redactedUrl, withBrokerChannel } from './charge-queue';

/** The broker: `AMQP_URL`, else the local RabbitMQ (`.ci/run` makes sure one answers). */
const AMQP_URL = process.env.AMQP_URL || 'amqp://guest:guest@127.0.0.1:5672';

describe('the charge queue on a real broker', () => {
  it('declares the queue and its dead-letter queue, again without harm, and deletes both', async () => {
    const queue = `test.api.charges.${randomUUID()}`;
    const exists = (name: string) =>
      withBrokerChannel(AMQP_URL, (channel) => channel.checkQueue(name)).then(
        () => true,
        () => false,
      );
    await declareChargeQueues(AMQP_URL, queue);
    await declareChargeQueues(AMQP_URL, queue);
    expect([await exists(queue), await exists(deadLetterQueue(queue))]).toEqual([true, true]);
    await deleteChargeQueues(AMQP_URL, queue);
    expect([await exists(queue), await exists(deadLetterQueue(queue))]).toEqual([false, false]);
  });

  it('fails fast, naming the broker without its password, when nothing answers', async () => {
    const closed = 'amqp://guest:secret@127.0.0.1:1';
    await expect(withBrokerChannel(closed, async () => undefined, 1000)).rejects.toThrow(
      'RabbitMQ not reachable at amqp://guest:***@127.0.0.1:1',
    );
    expect(redactedUrl('amqp://u:p@h:5672/v')).toBe('amqp://u:***@h:5672/v');
  });
});
