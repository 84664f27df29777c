import { CHARGE_PATTERN, deleteChargeQueues, withBrokerChannel } from '@idempotency-chain/api';
import { deriveHopKey } from '@idempotency-chain/http-client';
import { createServiceApp } from '@idempotency-chain/service-runtime';
import { bootService, post } from '@idempotency-chain/service-runtime/testing';
import { randomUUID } from 'node:crypto';
import { QueuedOrdersModule } from './queued-orders.module';

/** The broker: `AMQP_URL`, else the local RabbitMQ (`.ci/run` makes sure one answers). */
const AMQP_URL = process.env.AMQP_URL || 'amqp://guest:guest@127.0.0.1:5672';

/** The next message waiting on `queue`, taken off it; `undefined` when there is none. */
const take = (queue: string) => withBrokerChannel(AMQP_URL, async (channel) => (await channel.get(queue, { noAck: true })) || undefined);

const order = () => ({ orderId: `o-${randomUUID()}`, account: 'acct-3', amountCents: 700 });

describe('orders queuing charges on RabbitMQ (QueuedOrdersModule)', () => {
  it("answers 202 once the broker holds the charge, with the key of the order's record in the message headers; a replay publishes nothing", async () => {
    const queue = `test.orders.charges.${randomUUID()}`;
    const env = { IDEMPOTENCY_STORE: 'memory', CHARGE_QUEUE: queue, AMQP_URL };
    const orders = await bootService('orders', (config) => createServiceApp(QueuedOrdersModule.register(config)), env);
    try {
      const body = order();
      const key = randomUUID();
      const first = await post(orders, '/orders', body, key);
      expect(first.status).toBe(202);
      expect(JSON.parse(first.text)).toEqual({ orderId: body.orderId, status: 'charging' });

      const message = await take(queue);
      expect(JSON.parse(message!.content.toString())).toEqual({ pattern: CHARGE_PATTERN, data: body });
      // The key the HTTP client would send: derived from the order's record here, so it carries the caller.
      const sent = deriveHopKey({ service: 'orders', operation: 'orders.place', scope: '', key });
      expect(message!.properties.headers?.['idempotency-key']).toBe(`"${sent}"`);
      expect(message!.properties.deliveryMode).toBe(2);

      const again = await post(orders, '/orders', body, key);
      expect(again.status).toBe(202);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(await take(queue)).toBeUndefined();
    } finally {
      await orders.app.close();
      await deleteChargeQueues(AMQP_URL, queue);
    }
  });
});
