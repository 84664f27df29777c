import { Controller, Injectable, Module, type INestMicroservice } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { ClientProxyFactory, MessagePattern, Payload, Transport, type ClientProxy } from '@nestjs/microservices';
import { Test } from '@nestjs/testing';
import type { AddressInfo, Server } from 'node:net';
import { lastValueFrom } from 'rxjs';
import { MemoryStore } from '../memory-store';
import { IdempotencyExecution } from './idempotency-execution.decorator';
import type { IdempotentExecution } from './idempotency-execution';
import { IdempotencyModule } from './idempotency.module';
import { Idempotent } from './idempotent.decorator';
import { ProblemDetailsFilter } from './problem-details.filter';

@Injectable()
class Ledger {
  charges = 0;
}

@Controller()
class ChargesConsumer {
  constructor(private readonly ledger: Ledger) {}

  @MessagePattern({ cmd: 'charge' })
  @Idempotent('rpc.charge')
  charge(@Payload() data: { amountCents: number }, @IdempotencyExecution() execution?: IdempotentExecution) {
    this.ledger.charges += 1;
    return { charge: this.ledger.charges, amountCents: data.amountCents, fenced: (execution?.epoch ?? 0) > 0 };
  }
}

@Module({
  imports: [IdempotencyModule.forRoot({ service: 'rpc', store: new MemoryStore(), metrics: false, closeStore: true })],
  controllers: [ChargesConsumer],
  providers: [Ledger, { provide: APP_FILTER, useClass: ProblemDetailsFilter }],
})
class ConsumerModule {}

describe('@Idempotent on a microservice handler (TCP)', () => {
  let microservice: INestMicroservice;
  let client: ClientProxy;
  const send = (payload: object) => lastValueFrom(client.send({ cmd: 'charge' }, payload));

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({ imports: [ConsumerModule] }).compile();
    microservice = moduleRef.createNestMicroservice({
      transport: Transport.TCP,
      options: { host: '127.0.0.1', port: 0 },
      logger: false,
    });
    await microservice.listen();
    const { port } = microservice.unwrap<Server>().address() as AddressInfo;
    client = ClientProxyFactory.create({ transport: Transport.TCP, options: { host: '127.0.0.1', port } });
    await client.connect();
  });
  afterAll(async () => {
    await client.close();
    await microservice.close();
  });

  it('runs the handler once for a key sent twice in the payload', async () => {
    const first = await send({ idempotencyKey: 'rpc-key-1', amountCents: 500 });
    const second = await send({ idempotencyKey: 'rpc-key-1', amountCents: 500 });

    expect(first).toEqual({ charge: 1, amountCents: 500, fenced: true });
    expect(second).toEqual(first);
    expect(microservice.get(Ledger).charges).toBe(1);
  });

  it('answers a missing key and a reused key with their problem documents', async () => {
    await expect(send({ amountCents: 1 })).rejects.toMatchObject({
      type: 'urn:idempotency-chain:problem:missing-key',
      status: 400,
    });
    await expect(send({ idempotencyKey: 'rpc-key-1', amountCents: 501 })).rejects.toMatchObject({
      type: 'urn:idempotency-chain:problem:key-reused',
      status: 422,
    });
    expect(microservice.get(Ledger).charges).toBe(1);
  });
});
