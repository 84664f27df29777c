import { join } from 'node:path';
import { Controller, type INestMicroservice } from '@nestjs/common';
import { GrpcMethod, RpcException, Transport } from '@nestjs/microservices';
import { Test } from '@nestjs/testing';
import { credentials, loadPackageDefinition, Metadata, status, type Client, type ServiceError } from '@grpc/grpc-js';
import { loadSync, type Options } from '@grpc/proto-loader';
import { Idempotent } from '@idempotency-chain/idempotency/nest';
import { freePort } from '../support/redis';
import { consumerModule, Ledger, type Charge } from './support/charges';
import { conformanceCases } from './support/conformance';

const PROTO = join(__dirname, 'support', 'charges.proto');
const LOADER: Options = { keepCase: false, defaults: true };

/** The charges consumer as a gRPC service: its refusals and failures are gRPC statuses. */
@Controller()
class ChargesService {
  constructor(private readonly ledger: Ledger) {}

  @GrpcMethod('Charges', 'Charge')
  @Idempotent('grpc.charge')
  charge(body: Charge) {
    return this.ledger.charge(body);
  }

  @GrpcMethod('Charges', 'Decline')
  @Idempotent('grpc.decline')
  decline(body: Charge) {
    this.ledger.declines += 1;
    throw new RpcException({ code: status.FAILED_PRECONDITION, message: `declined ${body.amountCents} (${this.ledger.declines})` });
  }

  @GrpcMethod('Charges', 'Unavailable')
  @Idempotent('grpc.unavailable')
  unavailable() {
    this.ledger.unavailable += 1;
    throw new RpcException({ code: status.UNAVAILABLE, message: `bank down (${this.ledger.unavailable})` });
  }
}

/** What a failed call told its caller: its code, its message, and the problem type in its trailers. */
interface GrpcFailure {
  code: number;
  details: string;
  problemType: string | undefined;
}

type Unary = (request: object, metadata: Metadata, callback: (error: ServiceError | null, reply?: unknown) => void) => void;

describe('@Idempotent on gRPC (@grpc/grpc-js over loopback)', () => {
  let microservice: INestMicroservice;
  let client: Client & Record<'Charge' | 'Decline' | 'Unavailable', Unary>;

  /** One unary call with the key in the `idempotency-key` metadata (none when `key` is undefined). */
  const call = (method: 'Charge' | 'Decline' | 'Unavailable', key: string | undefined, body: object) =>
    new Promise<unknown>((resolve, reject) => {
      const metadata = new Metadata();
      if (key !== undefined) metadata.set('idempotency-key', key);
      client[method](body, metadata, (error, reply) => {
        if (!error) return resolve(reply);
        const problemType = error.metadata.get('idempotency-problem-type')[0];
        const failure: GrpcFailure = { code: error.code, details: error.details, problemType: problemType?.toString() };
        reject(failure);
      });
    });

  beforeAll(async () => {
    const url = `127.0.0.1:${await freePort()}`;
    const moduleRef = await Test.createTestingModule({ imports: [consumerModule([ChargesService])] }).compile();
    microservice = moduleRef.createNestMicroservice({
      transport: Transport.GRPC,
      options: { url, package: 'payments', protoPath: PROTO, loader: LOADER },
      logger: false,
    });
    await microservice.listen();
    const payments = loadPackageDefinition(loadSync(PROTO, LOADER)).payments as Record<string, new (...args: unknown[]) => Client>;
    client = new payments.Charges!(url, credentials.createInsecure()) as typeof client;
  });
  afterAll(async () => {
    client?.close();
    await microservice?.close();
  });

  conformanceCases(() => ({
    ledger: () => microservice.get(Ledger),
    charge: (key, body) => call('Charge', key, body),
    decline: (key, body) => call('Decline', key, body),
    unavailable: (key) => call('Unavailable', key, {}),
    reuseRefusal: {
      code: status.FAILED_PRECONDITION,
      details: expect.any(String) as string,
      problemType: 'urn:idempotency-chain:problem:key-reused',
    },
    declined: (attempt) => ({ code: status.FAILED_PRECONDITION, details: `declined 900 (${attempt})`, problemType: undefined }),
    bankDown: (attempt) => ({ code: status.UNAVAILABLE, details: `bank down (${attempt})`, problemType: undefined }),
  }));

  it('refuses a call with no key as INVALID_ARGUMENT, the problem type in its trailers', async () => {
    await expect(call('Charge', undefined, { amountCents: 1 })).rejects.toEqual({
      code: status.INVALID_ARGUMENT,
      details: expect.any(String) as string,
      problemType: 'urn:idempotency-chain:problem:missing-key',
    });
  });
});
