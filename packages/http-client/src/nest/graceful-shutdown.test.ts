import { Controller, Injectable, Module, Post, type BeforeApplicationShutdown, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { Agent, request } from 'undici';
import { IdempotentHttpClient } from '../client';
import { FaultServer } from '../fault-server.test-support';

/** A promise with its resolver outside. */
function signal(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

const entered = signal();
const proceed = signal();
const shuttingDown = signal();

@Controller()
class CheckoutController {
  constructor(private readonly orders: IdempotentHttpClient) {}

  @Post('checkout')
  async checkout() {
    entered.resolve();
    await proceed.promise; // still handling this request when SIGTERM arrives
    const created = await this.orders.post<{ ok: boolean }>('/orders', {});
    return created.body;
  }
}

/** Tells the test that Nest has called every destroy hook and is about to close the server. */
@Injectable()
class ShutdownWatch implements BeforeApplicationShutdown {
  beforeApplicationShutdown(): void {
    shuttingDown.resolve();
  }
}

describe('IdempotentHttpClient in a Nest app shutting down gracefully', () => {
  let downstream: FaultServer;
  let app: INestApplication;

  beforeAll(async () => {
    downstream = await FaultServer.start(() => ({ status: 201, body: { ok: true } }));
    @Module({
      controllers: [CheckoutController],
      providers: [
        ShutdownWatch,
        { provide: IdempotentHttpClient, useFactory: () => new IdempotentHttpClient({ baseUrl: downstream.url }) },
      ],
    })
    class AppModule {}
    app = await NestFactory.create(AppModule, new FastifyAdapter(), { logger: false });
    await app.listen(0, '127.0.0.1');
  });

  afterAll(async () => {
    await downstream.close();
  });

  it('lets a request in flight call the next hop to the end: the client closes after the server, not before', async () => {
    const url = await app.getUrl();
    // A caller of its own, closed once answered: a keep-alive connection would hold the server's close.
    const caller = new Agent();
    const answer = request(`${url}/checkout`, { method: 'POST', dispatcher: caller });
    await entered.promise;
    const close = vi.spyOn(IdempotentHttpClient.prototype, 'close');
    const closed = app.close();
    await shuttingDown.promise;
    // Nest has run its destroy hooks; the server now waits for this request, which calls the next hop.
    proceed.resolve();
    const response = await answer;
    expect({ status: response.statusCode, body: await response.body.json() }).toEqual({ status: 201, body: { ok: true } });
    await caller.close();
    await closed;
    expect(close).toHaveBeenCalledTimes(1);
    close.mockRestore();
  });
});
