import { deleteChargeQueues, withBrokerChannel } from '@idempotency-chain/api';
import { randomUUID } from 'node:crypto';
import { bootLabService, post } from './testing';

/** The broker: `AMQP_URL`, else the local RabbitMQ (`.ci/run` makes sure one answers). */
const AMQP_URL = process.env.AMQP_URL || 'amqp://guest:guest@127.0.0.1:5672';

describe('orders queuing charges on RabbitMQ, under the lab', () => {
  it('publishes no key under KEY_POLICY=none, and every request is a new message', async () => {
    const queue = `test.lab.charges.${randomUUID()}`;
    const env = { KEY_POLICY: 'none', IDEMPOTENCY_STORE: 'memory', CHARGE_TRANSPORT: 'amqp', CHARGE_QUEUE: queue, AMQP_URL };
    const orders = await bootLabService('orders', env);
    const take = () => withBrokerChannel(AMQP_URL, async (channel) => (await channel.get(queue, { noAck: true })) || undefined);
    try {
      const body = { orderId: `o-${randomUUID()}`, account: 'acct-3', amountCents: 700 };
      expect((await post(orders, '/orders', body, randomUUID())).status).toBe(202);
      expect((await post(orders, '/orders', body)).status).toBe(202);
      const messages = [await take(), await take()];
      expect(messages.map((m) => m?.properties.headers?.['idempotency-key'])).toEqual([undefined, undefined]);
    } finally {
      await orders.app.close();
      await deleteChargeQueues(AMQP_URL, queue);
    }
  });
});
