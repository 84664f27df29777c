import { Controller, HttpException, Injectable, Module, type INestMicroservice } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { ClientProxyFactory, MessagePattern, Payload, Transport, type ClientProxy } from '@nestjs/microservices';
import { Test } from '@nestjs/testing';
import type { AddressInfo, Server } from 'node:net';
import { lastValueFrom } from 'rxjs';
import { MemoryStore } from '../memory-store';
import type { Execution } from '../execution';
import { CurrentExecution } from './current-execution.decorator';
import { IdempotencyModule } from './idempotency.module';
import { Idempotent } from './idempotent.decorator';
import { ProblemDetailsFilter } from './problem-details.filter';

@Injectable()
class Ledger {
  charges = 0;
  declines = 0;
  unavailable = 0;
}

@Controller()
class ChargesConsumer {
  constructor(private readonly ledger: Ledger) {}

  @MessagePattern({ cmd: 'charge' })
  @Idempotent('rpc.charge')
  charge(@Payload() data: { amountCents: number }, @CurrentExecution() execution?: Execution) {
    this.ledger.charges += 1;
    return { charge: this.ledger.charges, amountCents: data.amountCents, fenced: (execution?.epoch ?? 0) > 0 };
  }

  @MessagePattern({ cmd: 'decline' })
  @Idempotent('rpc.decline')
  decline(@Payload() data: { amountCents: number }) {
    this.ledger.declines += 1;
    throw new HttpException({ message: `declined ${data.amountCents}`, attempt: this.ledger.declines }, 402);
  }

  @MessagePattern({ cmd: 'unavailable' })
  @Idempotent('rpc.unavailable')
  unavailable() {
    this.ledger.unavailable += 1;
    throw new HttpException('bank down', 503);
  }
}

@Module({
  imports: [IdempotencyModule.forRoot({ service: 'rpc', store: new MemoryStore(), scope: 'shared', metrics: false, closeStore: true })],
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

  it('stores a final error the handler threw (402) and throws it again on replay, without running the handler', async () => {
    const decline = (key: string) => lastValueFrom(client.send({ cmd: 'decline' }, { idempotencyKey: key, amountCents: 900 }));
    const first = await decline('rpc-decline-1').catch((e: unknown) => e);
    const replay = await decline('rpc-decline-1').catch((e: unknown) => e);

    expect(first).toMatchObject({ status: 402, detail: 'declined 900' });
    expect(replay).toEqual(first);
    expect(microservice.get(Ledger).declines).toBe(1);
  });

  it('releases the key after a transient error (503): the retry runs the handler again', async () => {
    const unavailable = () => lastValueFrom(client.send({ cmd: 'unavailable' }, { idempotencyKey: 'rpc-503-1' }));
    await expect(unavailable()).rejects.toMatchObject({ status: 503 });
    await expect(unavailable()).rejects.toMatchObject({ status: 503 });
    expect(microservice.get(Ledger).unavailable).toBe(2);
  });
});
