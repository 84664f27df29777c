import { Controller, type INestMicroservice, type Type } from '@nestjs/common';
import { GrpcMethod, GrpcStreamCall, GrpcStreamMethod } from '@nestjs/microservices';
import { Metadata, type Client, type ClientReadableStream, type ServerDuplexStream, type ServiceError, status } from '@grpc/grpc-js';
import { Idempotent } from '@idempotency-chain/idempotency/nest';
import { from, map, type Observable } from 'rxjs';
import { freshKey, Ledger, type Charge } from './support/charges';
import { chargeStreamsClient, grpcConsumer, type Reply } from './support/grpc-streams';

/** Server streaming: the charge, then its receipt, as a stream of two replies. */
@Controller()
class ReceiptsService {
  constructor(private readonly ledger: Ledger) {}

  @GrpcMethod('ChargeStreams', 'Receipts')
  @Idempotent('grpc.receipts')
  async receipts(body: Charge) {
    const charged = await this.ledger.charge(body);
    return from([charged, { ...charged, amountCents: 0 }]);
  }
}

/** A `@GrpcStreamMethod` consumer of `rpc` (client or bidirectional streaming): one charge per request of the stream. */
function streamMethodService(rpc: 'Batch' | 'Live'): Type {
  @Controller()
  class StreamMethodService {
    constructor(private readonly ledger: Ledger) {}

    @GrpcStreamMethod('ChargeStreams', rpc)
    @Idempotent(`grpc.${rpc}`)
    charge(requests: Observable<Charge>) {
      return requests.pipe(map((body) => this.ledger.charge(body)));
    }
  }
  return StreamMethodService;
}

/** Bidirectional streaming, the handler driving the call itself. */
@Controller()
class PipedService {
  constructor(private readonly ledger: Ledger) {}

  @GrpcStreamCall('ChargeStreams', 'Piped')
  @Idempotent('grpc.piped')
  piped(call: ServerDuplexStream<Charge, Reply>) {
    call.on('data', (body: Charge) => void this.ledger.charge(body).then((reply) => call.write(reply)));
    call.on('end', () => call.end());
  }
}

describe('@Idempotent on gRPC streaming methods (@grpc/grpc-js over loopback)', () => {
  describe('server streaming', () => {
    let microservice: INestMicroservice;
    let client: Client & { Receipts: (request: Charge, metadata: Metadata) => ClientReadableStream<Reply> };

    /** Every reply of one call with `key`, or its error's code and message. */
    const receipts = (key: string, body: Charge) =>
      new Promise<Reply[] | { code: number; details: string }>((resolve) => {
        const metadata = new Metadata();
        metadata.set('idempotency-key', key);
        const stream = client.Receipts(body, metadata);
        const received: Reply[] = [];
        stream.on('data', (reply: Reply) => received.push(reply));
        stream.on('error', (error: ServiceError) => resolve({ code: error.code, details: error.details }));
        stream.on('end', () => resolve(received));
      });

    beforeAll(async () => {
      const consumer = await grpcConsumer(ReceiptsService);
      microservice = consumer.microservice;
      await microservice.listen();
      client = chargeStreamsClient(consumer.url);
    });
    afterAll(async () => {
      client?.close();
      await microservice?.close();
    });

    it('is protected: the retry gets the same stream of replies, the handler runs once', async () => {
      const ledger = microservice.get(Ledger);
      const key = freshKey('receipts');
      const before = ledger.charges;

      const first = await receipts(key, { amountCents: 5 });
      const retry = await receipts(key, { amountCents: 5 });

      const charge = before + 1;
      expect(first).toEqual([
        { charge, amountCents: 5 },
        { charge, amountCents: 0 },
      ]);
      expect(retry).toEqual(first);
      expect(ledger.charges).toBe(charge);
    });

    it('refuses the key reused for another request, as for a unary call', async () => {
      const key = freshKey('receipts');
      await receipts(key, { amountCents: 5 });

      expect(await receipts(key, { amountCents: 6 })).toEqual({ code: status.FAILED_PRECONDITION, details: expect.any(String) as string });
    });
  });

  it.each([
    ['client streaming (@GrpcStreamMethod)', streamMethodService('Batch'), 'charge'],
    ['bidirectional streaming (@GrpcStreamMethod)', streamMethodService('Live'), 'charge'],
    ['bidirectional streaming (@GrpcStreamCall)', PipedService, 'piped'],
  ])('refuses %s at boot, naming the handler and why', async (_kind, controller, method) => {
    const { microservice } = await grpcConsumer(controller);
    try {
      await expect(microservice.listen()).rejects.toThrow(
        new TypeError(
          `@Idempotent on ${controller.name}.${method}: a gRPC method whose requests are a stream (client or bidirectional streaming) cannot be protected: one key for a stream of requests has no single request to fingerprint, nor one answer to replay`,
        ),
      );
    } finally {
      await microservice.close();
    }
  });
});
