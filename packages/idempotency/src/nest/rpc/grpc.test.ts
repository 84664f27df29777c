import { Metadata, status } from '@grpc/grpc-js';
import { NatsContext, RpcException } from '@nestjs/microservices';
import { InFlightError, KeyReusedError, StoreUnavailableError } from '../../errors';
import { problemOf } from '../problem-details';
import { grpc } from './grpc';

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
});
