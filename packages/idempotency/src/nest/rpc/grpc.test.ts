import { Metadata, status } from '@grpc/grpc-js';
import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host';
import { GrpcMethod, GrpcStreamCall, GrpcStreamMethod, MessagePattern, NatsContext, RpcException } from '@nestjs/microservices';
import { of } from 'rxjs';
import { IdempotencyCoordinator } from '../../coordinator';
import { InFlightError, KeyReusedError, StoreUnavailableError } from '../../errors';
import { MemoryStore } from '../../memory-store';
import { RPC_PATTERN_METADATA } from '../idempotency.constants';
import { problemOf } from '../problem-details';
import { GRPC_REQUEST_STREAM, grpc, isGrpcRequestStream } from './grpc';
import { RpcTransport } from './rpc.transport';

describe('gRPC transport', () => {
  it('sends a refusal as the gRPC status of its kind, with its problem type and Retry-After as trailers', () => {
    const inFlight = grpc.refusal?.(problemOf(new InFlightError('still running', 2)), new Metadata()) as {
      code: number;
      metadata: Metadata;
    };
    expect(inFlight.code).toBe(status.ABORTED);
    expect(inFlight.metadata).toBeInstanceOf(Metadata);
    expect(inFlight.metadata.getMap()).toEqual({
      'idempotency-problem-type': 'urn:idempotency-chain:problem:in-flight',
      'retry-after': '2',
    });

    const reused = grpc.refusal?.(problemOf(new KeyReusedError('another request')), new Metadata());
    expect(reused).toMatchObject({ code: status.FAILED_PRECONDITION });
    const storeDown = grpc.refusal?.(problemOf(new StoreUnavailableError('down')), new Metadata());
    expect(storeDown).toMatchObject({ code: status.UNAVAILABLE });
  });

  it("reads a handler's gRPC code as the status its outcome rule decides on", () => {
    const statusOf = (error: unknown) => grpc.statusOf?.(error);
    expect(statusOf(new RpcException({ code: status.FAILED_PRECONDITION, message: 'declined' }))).toBe(422);
    expect(statusOf(new RpcException({ code: status.NOT_FOUND, message: 'no such card' }))).toBe(404);
    expect(statusOf(new RpcException({ code: status.UNAVAILABLE, message: 'bank down' }))).toBe(503);
    expect(statusOf(new RpcException({ code: 99, message: 'unknown code' }))).toBeUndefined();
    expect(statusOf(new RpcException('a message'))).toBeUndefined();
    expect(statusOf(new Error('plain'))).toBeUndefined();
  });

  it('owns a call metadata and no other context, and reads every idempotency-key value of it', () => {
    const metadata = new Metadata();
    expect(grpc.owns(metadata)).toBe(true);
    expect(grpc.owns(new NatsContext(['charge', undefined]))).toBe(false);
    expect(grpc.keyOf?.(metadata)).toBeUndefined();
    metadata.add('idempotency-key', 'a');
    metadata.add('idempotency-key', 'b');
    expect(grpc.keyOf?.(metadata)).toEqual(['a', 'b']);
  });

  it("stores a handler's final error without its trailing metadata, which JSON cannot carry", () => {
    const trailers = new Metadata();
    trailers.set('decline-reason', 'insufficient-funds');
    const declined = new RpcException({ code: status.FAILED_PRECONDITION, message: 'declined', metadata: trailers });
    const plain = new RpcException({ code: status.FAILED_PRECONDITION, message: 'declined' });

    expect((grpc.storable?.(declined) as RpcException).getError()).toEqual({ code: status.FAILED_PRECONDITION, message: 'declined' });
    expect(grpc.storable?.(plain)).toBe(plain);
  });

  it('tells the methods whose requests are a stream by the patterns Nest gives them', () => {
    class Charges {
      @GrpcMethod('Charges', 'Charge') charge() {}
      @GrpcMethod('Charges', 'Receipts') receipts() {}
      @GrpcStreamMethod('Charges', 'Batch') batch() {}
      @GrpcStreamCall('Charges', 'Piped') piped() {}
      @MessagePattern('charges.charge') message() {}
    }
    const streams = (method: keyof Charges) => isGrpcRequestStream(Reflect.getMetadata(RPC_PATTERN_METADATA, Charges.prototype[method]));

    expect(streams('batch')).toBe(true);
    expect(streams('piped')).toBe(true);
    for (const unary of ['charge', 'receipts', 'message'] as const) expect(streams(unary)).toBe(false);
    expect(isGrpcRequestStream(undefined)).toBe(false);
    expect(isGrpcRequestStream([null, 'charges', { streaming: 'no_stream' }])).toBe(false);
  });

  it('refuses a call whose requests arrive as a stream, should one escape the check at boot', () => {
    const transport = new RpcTransport(new IdempotencyCoordinator({ service: 'payments', store: new MemoryStore() }));
    const call = (data: unknown) => {
      const host = new ExecutionContextHost([data, new Metadata()]);
      host.setType('rpc');
      return host;
    };

    expect(transport.unsupported(call(of({ amountCents: 5 })))).toBe(GRPC_REQUEST_STREAM);
    expect(transport.unsupported(call({ amountCents: 5 }))).toBeUndefined();
  });
});
