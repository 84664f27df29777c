import {
  Body,
  Controller,
  Module,
  Post,
  type DynamicModule,
  type INestApplication,
  type MiddlewareConsumer,
  type NestModule,
  type Type,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'undici';
import { MemoryStore, type RequestIdentity } from '@idempotency-chain/idempotency';
import { Idempotent, IdempotencyModule } from '@idempotency-chain/idempotency/nest';
import { IdempotentHttpClient } from '../client';
import type { IdempotentClientOptions } from '../client-options';
import { deriveHopKey } from '../derived-key';
import { FaultServer } from '../fault-server.test-support';
import { currentRequestContext } from '../request-context';
import { RequestContextMiddleware } from './request-context.middleware';

@Controller()
class CheckoutController {
  constructor(private readonly orders: IdempotentHttpClient) {}

  @Post('checkout')
  async checkout(@Body() body: { orderId: string }) {
    await sleep(1); // the context must survive timers and awaits inside the handler
    const created = await this.orders.post<{ key: string }>('/orders', body);
    return { boundKey: currentRequestContext()?.key ?? null, downstreamKey: created.body.key };
  }
}

function appModule(
  downstreamUrl: string,
  controller: Type = CheckoutController,
  imports: DynamicModule[] = [],
  options: Partial<IdempotentClientOptions> = {},
) {
  @Module({
    imports,
    controllers: [controller],
    providers: [{ provide: IdempotentHttpClient, useFactory: () => new IdempotentHttpClient({ baseUrl: downstreamUrl, ...options }) }],
  })
  class AppModule implements NestModule {
    configure(consumer: MiddlewareConsumer) {
      consumer.apply(RequestContextMiddleware).forRoutes('*');
    }
  }
  return AppModule;
}

describe.each([
  ['fastify', () => new FastifyAdapter()],
  ['express', () => new ExpressAdapter()],
])('RequestContextMiddleware under %s (forwardUnboundKey: one trusted caller)', (_name, adapter) => {
  let downstream: FaultServer;
  let app: INestApplication;
  let url: string;

  beforeAll(async () => {
    downstream = await FaultServer.start((seen) => ({ status: 201, body: { key: seen.key } }));
    app = await NestFactory.create(appModule(downstream.url, CheckoutController, [], { forwardUnboundKey: true }), adapter(), {
      logger: false,
    });
    await app.listen(0, '127.0.0.1');
    url = await app.getUrl();
  });

  afterAll(async () => {
    const close = vi.spyOn(IdempotentHttpClient.prototype, 'close');
    await app.close();
    expect(close).toHaveBeenCalledTimes(1); // Nest's onApplicationShutdown closed the client's agent
    close.mockRestore();
    await downstream.close();
  });

  async function checkout(headers: Record<string, string>, orderId = 'o-1') {
    const response = await request(`${url}/checkout`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ orderId }),
    });
    return { status: response.statusCode, body: (await response.body.json()) as { boundKey: string | null; downstreamKey: string } };
  }

  it('carries the inbound key and the remaining deadline to the downstream call', async () => {
    const { status, body } = await checkout({ 'idempotency-key': '"k-abc"', 'request-timeout-ms': '1500' }, 'o-deadline');
    expect(status).toBe(201);
    expect(body).toEqual({ boundKey: 'k-abc', downstreamKey: 'k-abc' });
    const seen = downstream.seen.find((r) => r.body.includes('o-deadline'))!;
    expect(seen.timeoutMs).toBeLessThanOrEqual(1500);
    expect(seen.timeoutMs).toBeGreaterThan(500);
  });

  it('binds nothing for an invalid key: the downstream call gets a key of its own', async () => {
    const { body } = await checkout({ 'idempotency-key': 'x'.repeat(300) });
    expect(body.boundKey).toBeNull();
    expect(body.downstreamKey).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('keeps concurrent requests apart', async () => {
    const results = await Promise.all(Array.from({ length: 30 }, (_, i) => checkout({ 'idempotency-key': `par-${i}` }, `o-${i}`)));
    results.forEach(({ body }, i) => expect(body).toEqual({ boundKey: `par-${i}`, downstreamKey: `par-${i}` }));
  });
});

@Controller()
class IdempotentCheckoutController {
  constructor(private readonly orders: IdempotentHttpClient) {}

  @Post('checkout')
  @Idempotent('shop.checkout')
  async checkout(@Body() body: { orderId: string }) {
    const created = await this.orders.post<{ key: string }>('/orders', body);
    return { hop: currentRequestContext()?.hop ?? null, downstreamKey: created.body.key };
  }
}

describe.each([
  ['fastify', () => new FastifyAdapter()],
  ['express', () => new ExpressAdapter()],
])('RequestContextMiddleware before an @Idempotent route under %s', (_name, adapter) => {
  let downstream: FaultServer;
  let app: INestApplication;
  let url: string;

  beforeAll(async () => {
    downstream = await FaultServer.start((seen) => ({ status: 201, body: { key: seen.key } }));
    const idempotency = IdempotencyModule.forRoot({
      service: 'shop',
      store: new MemoryStore(),
      keyMode: 'fingerprint',
      scope: 'shared',
      closeStore: true,
    });
    app = await NestFactory.create(appModule(downstream.url, IdempotentCheckoutController, [idempotency]), adapter(), { logger: false });
    await app.listen(0, '127.0.0.1');
    url = await app.getUrl();
  });
  afterAll(async () => {
    await app.close();
    await downstream.close();
  });

  const checkout = async (orderId: string, key?: string) => {
    const response = await request(`${url}/checkout`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(key !== undefined && { 'idempotency-key': key }) },
      body: JSON.stringify({ orderId }),
    });
    return (await response.body.json()) as { hop: RequestIdentity | null; downstreamKey: string };
  };

  it("binds the route's record, and sends the key derived from it", async () => {
    const { hop, downstreamKey } = await checkout('o-keyed', '"k-abc"');
    expect(hop).toEqual({ service: 'shop', operation: 'shop.checkout', scope: '', key: 'k-abc', fingerprinted: false });
    expect(downstreamKey).toBe(deriveHopKey(hop!));
  });

  it('sends a keyless request the key of its fingerprint record', async () => {
    const { hop, downstreamKey } = await checkout('o-keyless');
    expect(hop).toMatchObject({ service: 'shop', operation: 'shop.checkout', scope: '', fingerprinted: true });
    expect(hop!.key).toMatch(/^[0-9a-f]{64}$/);
    expect(downstreamKey).toBe(deriveHopKey(hop!));
  });
});

describe('RequestContextMiddleware before a route that is not @Idempotent', () => {
  let downstream: FaultServer;
  let app: INestApplication;
  let url: string;

  beforeAll(async () => {
    downstream = await FaultServer.start((seen) => ({ status: 201, body: { key: seen.key } }));
    app = await NestFactory.create(appModule(downstream.url), new FastifyAdapter(), { logger: false });
    await app.listen(0, '127.0.0.1');
    url = await app.getUrl();
  });
  afterAll(async () => {
    await app.close();
    await downstream.close();
  });

  it("refuses to forward the caller's key: two tenants sending order-1 must not share one downstream record", async () => {
    const statuses = await Promise.all(
      ['tenant-a', 'tenant-b'].map(async (tenant) => {
        const response = await request(`${url}/checkout`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'idempotency-key': '"order-1"', authorization: tenant },
          body: JSON.stringify({ orderId: 'o-1' }),
        });
        await response.body.dump();
        return response.statusCode;
      }),
    );
    expect(statuses).toEqual([500, 500]);
    expect(downstream.seen).toHaveLength(0);
  });
});
