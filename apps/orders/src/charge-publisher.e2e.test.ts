import { bootService, CHARGE_PATTERN, type BootedService } from '@idempotency-chain/lab-service';
import * as payments from '@idempotency-chain/payments/dist/charges.transport';
import { connect, type ChannelWrapper } from 'amqp-connection-manager';
import { randomUUID } from 'node:crypto';
import { OrdersModule } from './orders.module';

/** The broker: `AMQP_URL`, else the local RabbitMQ (`.ci/run` makes sure one answers). */
const AMQP_URL = process.env.AMQP_URL || 'amqp://guest:guest@127.0.0.1:5672';

async function place(orders: BootedService, body: unknown, key?: string) {
  const response = await fetch(`${orders.url}/orders`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key ? { 'idempotency-key': key } : {}) },
    body: JSON.stringify(body),
  });
  return { status: response.status, headers: response.headers, body: (await response.json()) as Record<string, unknown> };
}

const order = () => ({ orderId: `o-${randomUUID()}`, account: 'acct-3', amountCents: 700 });

describe('orders queuing charges on RabbitMQ (CHARGE_TRANSPORT=amqp)', () => {
  const broker = connect([AMQP_URL]);
  let channel: ChannelWrapper;
  beforeAll(async () => {
    channel = broker.createChannel({ json: false });
    await channel.waitForConnect();
  });
  afterAll(async () => {
    await channel.close();
    await broker.close();
  });

  /** orders on a queue of its own (`CHARGE_QUEUE`), and a way to take what it published. */
  async function bootOrders(policy: string) {
    const queue = `test.orders.charges.${randomUUID()}`;
    const orders = await bootService('orders', (c) => OrdersModule.register(c), {
      KEY_POLICY: policy,
      IDEMPOTENCY_STORE: 'memory',
      CHARGE_TRANSPORT: 'amqp',
      CHARGE_QUEUE: queue,
      AMQP_URL,
    });
    const take = async () => {
      const message = await channel.get(queue, { noAck: true });
      return message === false ? undefined : message;
    };
    const close = async () => {
      await orders.app.close();
      await payments.deleteChargeQueues(AMQP_URL, queue);
    };
    return { orders, take, close };
  }

  it('answers 202 once the broker holds the charge, with the key in the message headers; a replay publishes nothing', async () => {
    const { orders, take, close } = await bootOrders('propagated');
    try {
      const body = order();
      const key = randomUUID();
      const first = await place(orders, body, key);
      expect(first.status).toBe(202);
      expect(first.body).toEqual({ orderId: body.orderId, status: 'charging' });

      const message = await take();
      expect(JSON.parse(message!.content.toString())).toEqual({ pattern: CHARGE_PATTERN, data: body });
      expect(message!.properties.headers?.['idempotency-key']).toBe(`"${key}"`);
      expect(message!.properties.deliveryMode).toBe(2);

      const again = await place(orders, body, key);
      expect(again.status).toBe(202);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(await take()).toBeUndefined();
    } finally {
      await close();
    }
  });

  it('publishes no key under KEY_POLICY=none, and every request is a new message', async () => {
    const { orders, take, close } = await bootOrders('none');
    try {
      const body = order();
      expect((await place(orders, body, randomUUID())).status).toBe(202);
      expect((await place(orders, body)).status).toBe(202);
      const messages = [await take(), await take()];
      expect(messages.map((m) => m?.properties.headers?.['idempotency-key'])).toEqual([undefined, undefined]);
    } finally {
      await close();
    }
  });
});
