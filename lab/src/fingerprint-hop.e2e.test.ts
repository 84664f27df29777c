import { IdempotentHttpClient } from '@idempotency-chain/http-client';
import { relayAnswer, RequestContextMiddleware } from '@idempotency-chain/http-client/nest';
import { MemoryStore } from '@idempotency-chain/idempotency';
import { Idempotent, IdempotencyModule } from '@idempotency-chain/idempotency/nest';
import { Body, Controller, Module, Post, type INestApplication, type MiddlewareConsumer, type NestModule } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { bootLabService, chargeCount, type LabService, post } from './testing';

interface Order {
  orderId: string;
  account: string;
  amountCents: number;
}

/** A hop keyed on the fingerprint (its callers send no key) that charges through payments, no business key given. */
@Controller('pay')
class PayController {
  constructor(private readonly payments: IdempotentHttpClient) {}

  @Post()
  @Idempotent('hop.pay')
  pay(@Body() order: Order) {
    return relayAnswer(this.payments.post('/charges', order));
  }
}

function hopModule(payments: LabService) {
  @Module({
    imports: [
      IdempotencyModule.forRoot({ service: 'hop', store: new MemoryStore(), keyMode: 'fingerprint', scope: 'shared', closeStore: true }),
    ],
    controllers: [PayController],
    // One attempt: a lost reply is the hop's 502 at once, and its record is released.
    providers: [
      {
        provide: IdempotentHttpClient,
        useFactory: () =>
          new IdempotentHttpClient({ baseUrl: payments.url, maxAttempts: 1, headers: { authorization: payments.authorization } }),
      },
    ],
  })
  class HopModule implements NestModule {
    configure(consumer: MiddlewareConsumer) {
      consumer.apply(RequestContextMiddleware).forRoutes(PayController);
    }
  }
  return HopModule;
}

describe('a keyless request through a fingerprint-mode hop', () => {
  let payments: LabService;
  let hop: INestApplication;
  let hopUrl: string;
  beforeAll(async () => {
    payments = await bootLabService('payments', { KEY_POLICY: 'propagated', IDEMPOTENCY_STORE: 'memory' });
    hop = await NestFactory.create(hopModule(payments), new FastifyAdapter(), { logger: false });
    await hop.listen(0, '127.0.0.1');
    hopUrl = (await hop.getUrl()).replace('[::1]', '127.0.0.1');
  });
  afterAll(async () => {
    await hop.close();
    await payments.app.close();
  });

  it("is charged once when payments' reply is lost and the customer retries: the retry sends payments the same key", async () => {
    const order = { orderId: 'o-fingerprint-hop', account: 'acct-1', amountCents: 900 };
    // Payments charges, then its reply is lost: the hop answers 502 and gives its record back.
    const armed = await fetch(`${payments.url}/lab/faults`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ loseReplies: 1 }),
    });
    expect(armed.status).toBe(204);
    expect((await post({ url: hopUrl }, '/pay', order)).status).toBe(502);

    const retry = await post({ url: hopUrl }, '/pay', order);
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBeNull(); // the hop ran again ...
    expect(await chargeCount(payments, order.orderId)).toBe(1); // ... and payments answered from its record
  });
});
