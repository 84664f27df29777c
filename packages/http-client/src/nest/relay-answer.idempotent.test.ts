import { MemoryStore } from '@idempotency-chain/idempotency';
import { Idempotent, IdempotencyModule } from '@idempotency-chain/idempotency/nest';
import { Controller, Module, Post, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { request } from 'undici';
import { IdempotentHttpClient } from '../client';
import { FaultServer, reply, type Script } from '../fault-server.test-support';
import { relayAnswer } from './relay-answer';

// A real hop: @Idempotent over a real store, calling a real next hop over HTTP.
describe('relayAnswer under @Idempotent: an answer about the hop releases its key', () => {
  let downstream: FaultServer;
  let app: INestApplication;
  let url: string;

  async function boot(script: Script): Promise<void> {
    downstream = await FaultServer.start(script);
    @Controller()
    class OrdersController {
      constructor(private readonly payments: IdempotentHttpClient) {}
      @Post('orders')
      @Idempotent('orders.place')
      place() {
        return relayAnswer(this.payments.post('/charges', { amountCents: 500 }));
      }
    }
    @Module({
      imports: [IdempotencyModule.forRoot({ service: 'orders', store: new MemoryStore(), scope: 'shared', metrics: false })],
      controllers: [OrdersController],
      providers: [{ provide: IdempotentHttpClient, useFactory: () => new IdempotentHttpClient({ baseUrl: downstream.url }) }],
    })
    class OrdersModule {}
    app = await NestFactory.create(OrdersModule, new FastifyAdapter(), { logger: false });
    await app.listen(0, '127.0.0.1');
    url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
  }
  const placeOrder = async () => {
    const response = await request(`${url}/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': 'order-1' },
      body: '{}',
    });
    return { status: response.statusCode, body: (await response.body.json()) as Record<string, unknown> };
  };

  afterEach(async () => {
    await app.close();
    await downstream.close();
  });

  it.each([302, 401, 403, 404, 500])("a next hop's %i is a 502, not stored: the retry with the same key runs again", async (code) => {
    await boot((_request, index) =>
      index === 0 ? reply(code, {}, { message: 'service token expired' }) : reply(201, {}, { chargeId: 'ch_1' }),
    );
    expect((await placeOrder()).status).toBe(502);
    expect(await placeOrder()).toEqual({ status: 201, body: { chargeId: 'ch_1' } }); // not the first answer, replayed
    expect(downstream.seen).toHaveLength(2);
  });

  it("a decline (402) is the customer's answer: relayed, stored, replayed", async () => {
    await boot(() => reply(402, {}, { message: 'card declined' }));
    expect(await placeOrder()).toMatchObject({ status: 402, body: { message: 'card declined' } });
    expect(await placeOrder()).toMatchObject({ status: 402 });
    expect(downstream.seen).toHaveLength(1);
  });
});
