import { Controller, HttpException, Injectable, Module, type INestMicroservice } from '@nestjs/common';
import { ClientProxyFactory, MessagePattern, Payload, RpcException, Transport, type ClientProxy } from '@nestjs/microservices';
import { Test } from '@nestjs/testing';
import type { AddressInfo, Server } from 'node:net';
import { from, lastValueFrom, toArray } from 'rxjs';
import { Recorder } from '../../test/support/recorder';
import { MemoryStore } from '../memory-store';
import type { Execution } from '../execution';
import { CurrentExecution } from './current-execution.decorator';
import { IdempotencyModule } from './idempotency.module';
import { Idempotent } from './idempotent.decorator';

@Injectable()
class Ledger {
  charges = 0;
  declines = 0;
  rpcDeclines = 0;
  unavailable = 0;
  streams = 0;
  ruled = 0;
  deliveries = 0;
}

const recorder = new Recorder();
const brokenRule = new Error('isFinal bug');

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

  @MessagePattern({ cmd: 'decline-rpc' })
  @Idempotent('rpc.decline-rpc')
  declineRpc(@Payload() data: { amountCents: number }) {
    this.ledger.rpcDeclines += 1;
    throw new RpcException({ status: 402, message: `declined ${data.amountCents}`, attempt: this.ledger.rpcDeclines });
  }

  @MessagePattern({ cmd: 'decline-bigint' })
  @Idempotent('rpc.decline-bigint')
  declineBigint() {
    this.ledger.declines += 1;
    // A final error whose body JSON cannot hold.
    throw new HttpException({ message: 'declined', balance: 10n ** 20n }, 402);
  }

  @MessagePattern({ cmd: 'stream' })
  @Idempotent('rpc.stream')
  stream() {
    this.ledger.streams += 1;
    return from([1, 2, this.ledger.streams]);
  }

  @MessagePattern({ cmd: 'rule-throws' })
  // An app's rule with a bug; a key still held would answer 409 at once.
  @Idempotent('rpc.rule-throws', {
    maxWaitMs: 0,
    isFinal: () => {
      throw brokenRule;
    },
  })
  ruleThrows() {
    return { ruled: (this.ledger.ruled += 1) };
  }

  @MessagePattern({ cmd: 'deliver' })
  @Idempotent('rpc.deliver')
  deliver() {
    this.ledger.deliveries += 1;
    // Data that holds a status of its own: the webhook's receiver answered 503.
    return { delivery: this.ledger.deliveries, statusCode: 503 };
  }

  @MessagePattern({ cmd: 'unavailable' })
  @Idempotent('rpc.unavailable')
  unavailable() {
    this.ledger.unavailable += 1;
    throw new RpcException({ status: 503, message: 'bank down' });
  }
}

@Module({
  imports: [
    IdempotencyModule.forRoot({
      service: 'rpc',
      store: new MemoryStore(),
      scope: 'shared',
      metrics: false,
      closeStore: true,
      observers: [recorder],
    }),
  ],
  controllers: [ChargesConsumer],
  // No ProblemDetailsFilter: the package's errors must reach the caller without one.
  providers: [Ledger],
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

  it('stores a final HttpException the handler threw (402) and throws it again on replay, without running the handler', async () => {
    const decline = (key: string) => lastValueFrom(client.send({ cmd: 'decline' }, { idempotencyKey: key, amountCents: 900 }));
    const first = await decline('rpc-decline-1').catch((e: unknown) => e);
    const replay = await decline('rpc-decline-1').catch((e: unknown) => e);

    // Without a filter, Nest answers an HttpException over RPC as an internal error; it is stored all the same.
    expect(first).toMatchObject({ status: 'error' });
    expect(replay).toEqual(first);
    expect(microservice.get(Ledger).declines).toBe(1);
  });

  it('completes the record of a final error whose body JSON cannot hold: the retry is told its result was not stored, and the handler does not run again', async () => {
    const decline = () => lastValueFrom(client.send({ cmd: 'decline-bigint' }, { idempotencyKey: 'rpc-decline-bigint-1' }));
    const before = microservice.get(Ledger).declines;
    await expect(decline()).rejects.toMatchObject({ status: 'error' });

    await expect(decline()).rejects.toMatchObject({ type: 'urn:idempotency-chain:problem:result-not-stored', status: 500 });
    expect(microservice.get(Ledger).declines).toBe(before + 1);
  });

  it('releases the key after a transient RpcException (503): the retry runs the handler again', async () => {
    const unavailable = () => lastValueFrom(client.send({ cmd: 'unavailable' }, { idempotencyKey: 'rpc-503-1' }));
    await expect(unavailable()).rejects.toMatchObject({ status: 503 });
    await expect(unavailable()).rejects.toMatchObject({ status: 503 });
    expect(microservice.get(Ledger).unavailable).toBe(2);
  });

  it('stores what the handler returned, though it holds a statusCode field: the retry replays it', async () => {
    const deliver = () => lastValueFrom(client.send({ cmd: 'deliver' }, { idempotencyKey: 'rpc-deliver-1' }));
    const first = await deliver();
    const retry = await deliver();

    expect(first).toEqual({ delivery: 1, statusCode: 503 });
    expect(retry).toEqual(first);
    expect(microservice.get(Ledger).deliveries).toBe(1);
  });

  it('stores an RpcException whose payload carries a final status (402), and throws it again on replay', async () => {
    const decline = () => lastValueFrom(client.send({ cmd: 'decline-rpc' }, { idempotencyKey: 'rpc-decline-2', amountCents: 700 }));
    const first = await decline().catch((e: unknown) => e);
    const replay = await decline().catch((e: unknown) => e);

    expect(first).toMatchObject({ status: 402, message: 'declined 700', attempt: 1 });
    expect(replay).toEqual(first);
  });

  it('stores what the handler answered when isFinal throws, and reports the rule’s error: the retry replays it', async () => {
    const call = () => lastValueFrom(client.send({ cmd: 'rule-throws' }, { idempotencyKey: 'rpc-rule-1' }));
    const first = await call();
    const retry = await call();

    expect(first).toEqual({ ruled: 1 });
    expect(retry).toEqual(first);
    expect(microservice.get(Ledger).ruled).toBe(1);
    const ruled = recorder.events.filter((event) => event.operation === 'rpc.rule-throws').map((event) => event.outcome);
    expect(ruled).toEqual(['is_final_threw', 'executed', 'replayed']);
    expect(recorder.events.find((event) => event.outcome === 'is_final_threw')?.error).toBe(brokenRule);
  });

  it('replays every value an Observable handler emitted, in order', async () => {
    const stream = () => lastValueFrom(client.send({ cmd: 'stream' }, { idempotencyKey: 'rpc-stream-1' }).pipe(toArray()));
    const first = await stream();
    const replay = await stream();

    expect(first).toEqual([1, 2, 1]);
    expect(replay).toEqual(first);
    expect(microservice.get(Ledger).streams).toBe(1);
  });
});
