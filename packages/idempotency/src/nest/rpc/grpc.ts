import { isObservable } from 'rxjs';
import { HeaderName } from '../../header-name';
import type { Problem } from '../problem-details';
import { rpcPayload } from './rpc-result';
import type { MicroserviceTransport } from './microservice-transport';

/** The parts of `@grpc/grpc-js`' `Metadata` used here (the context of a gRPC handler is the call's metadata). */
interface GrpcMetadataLike {
  get: (key: string) => (string | Buffer)[];
  set: (key: string, value: string) => void;
  getMap: () => Record<string, unknown>;
}

/** The parts of `@grpc/grpc-js`' server call used here. */
interface GrpcCallLike {
  cancelled: boolean;
  once: (event: 'cancelled', listener: () => void) => unknown;
}

/** gRPC status codes (`@grpc/grpc-js`' `status`), named here so that package stays optional. */
const GrpcStatus = {
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  OUT_OF_RANGE: 11,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  DATA_LOSS: 15,
  UNAUTHENTICATED: 16,
} as const;

/**
 * The HTTP status each gRPC code stands for, as `google.rpc.Code` maps them,
 * but for FAILED_PRECONDITION: 422, not 400. Here a 400 is a request refused
 * before any effect, whose key is released; FAILED_PRECONDITION is a
 * service's considered refusal (a card declined), final like a 422.
 */
const HTTP_STATUS_OF_CODE: Record<number, number> = {
  [GrpcStatus.CANCELLED]: 499,
  [GrpcStatus.UNKNOWN]: 500,
  [GrpcStatus.INVALID_ARGUMENT]: 400,
  [GrpcStatus.DEADLINE_EXCEEDED]: 504,
  [GrpcStatus.NOT_FOUND]: 404,
  [GrpcStatus.ALREADY_EXISTS]: 409,
  [GrpcStatus.PERMISSION_DENIED]: 403,
  [GrpcStatus.RESOURCE_EXHAUSTED]: 429,
  [GrpcStatus.FAILED_PRECONDITION]: 422,
  [GrpcStatus.ABORTED]: 409,
  [GrpcStatus.OUT_OF_RANGE]: 400,
  [GrpcStatus.UNIMPLEMENTED]: 501,
  [GrpcStatus.INTERNAL]: 500,
  [GrpcStatus.UNAVAILABLE]: 503,
  [GrpcStatus.DATA_LOSS]: 500,
  [GrpcStatus.UNAUTHENTICATED]: 401,
};

/** The gRPC code a refusal of this package is sent with, by its HTTP status. */
function refusalCode(status: number): number {
  switch (status) {
    case 400:
      return GrpcStatus.INVALID_ARGUMENT; // no key, or a malformed one
    case 409:
      return GrpcStatus.ABORTED; // the key's first attempt still runs: retry later
    case 422:
      return GrpcStatus.FAILED_PRECONDITION; // the key was used for another request: never retry it as is
    case 429:
      return GrpcStatus.RESOURCE_EXHAUSTED;
    case 503:
      return GrpcStatus.UNAVAILABLE; // the store is down: retry later
    default:
      return status < 500 ? GrpcStatus.FAILED_PRECONDITION : GrpcStatus.INTERNAL;
  }
}

/**
 * gRPC: the key is the call's `idempotency-key` metadata; the package's
 * refusals and a handler's errors are gRPC statuses, as gRPC callers expect.
 */
export const grpc: MicroserviceTransport = {
  transport: 'GRPC',
  owns(context) {
    const metadata = context as Partial<GrpcMetadataLike>;
    return typeof metadata.getMap === 'function' && typeof metadata.get === 'function' && typeof metadata.set === 'function';
  },
  /** Every value of the metadata entry (gRPC lower-cases its keys), so a repeated entry is refused rather than half read. */
  keyOf(context) {
    const values = (context as GrpcMetadataLike)
      .get(HeaderName.IdempotencyKey)
      .map((value) => (Buffer.isBuffer(value) ? value.toString('latin1') : value));
    return values.length > 0 ? values : undefined;
  },
  /**
   * A refusal as a gRPC status, the payload of the `RpcException` Nest's
   * gRPC server passes to grpc-js: the code by its kind (see
   * `refusalCode`), the problem's detail as the status message, and its
   * type (`idempotency-problem-type`) and `retry-after` seconds, when it has
   * them, as trailing metadata. The metadata is built with the class of the
   * call's own metadata, so it is the grpc-js copy the server runs.
   */
  refusal(problem: Problem, context) {
    const trailers = new (context.constructor as new () => GrpcMetadataLike)();
    trailers.set('idempotency-problem-type', problem.document.type);
    const retryAfter = problem.headers['retry-after'];
    if (retryAfter !== undefined) trailers.set('retry-after', retryAfter);
    return { code: refusalCode(problem.status), details: problem.document.detail ?? problem.document.title, metadata: trailers };
  },
  /**
   * The numeric `code` of an `RpcException`'s payload, mapped as
   * `HTTP_STATUS_OF_CODE` says: NOT_FOUND or FAILED_PRECONDITION are
   * stored and replayed, UNAVAILABLE or ABORTED release the key.
   */
  statusOf(error) {
    const code = (rpcPayload(error) as { code?: unknown } | null | undefined)?.code;
    return typeof code === 'number' ? HTTP_STATUS_OF_CODE[code] : undefined;
  },
  /**
   * A final error without the trailing metadata it may carry: a `Metadata`
   * does not survive JSON, and what came back from the store would reach
   * grpc-js as metadata that is none. The replay is the code and the message.
   */
  storable(error) {
    const payload = rpcPayload(error);
    if (typeof payload !== 'object' || payload === null || !('metadata' in payload)) return error;
    const { metadata: _trailers, ...rest } = payload as Record<string, unknown>;
    return { getError: () => rest };
  },
  /** The call is the handler's third argument, as Nest passes it; grpc-js emits `cancelled` for a cancel and a deadline alike. */
  whenGone(args, listener) {
    const call = args[2] as Partial<GrpcCallLike> | undefined;
    if (typeof call?.once !== 'function') return;
    if (call.cancelled) listener();
    else call.once('cancelled', listener);
  },
};

/**
 * Why `@Idempotent` refuses a gRPC method whose requests are a stream
 * (client or bidirectional streaming: `@GrpcStreamMethod`,
 * `@GrpcStreamCall`): one key for a stream of requests has no single
 * request to fingerprint, and answers sent while requests still arrive
 * cannot be held and replayed as one. A server-streaming method (one
 * request, `@GrpcMethod`) is protected: its replies are held until the
 * handler's stream completes, then sent, and replayed as the same stream
 * (up to `maxResponseBytes`: see `heldStream`).
 */
export const GRPC_REQUEST_STREAM =
  'a gRPC method whose requests are a stream (client or bidirectional streaming) cannot be protected: one key for a stream of requests has no single request to fingerprint, nor one answer to replay';

/**
 * Whether a handler's message patterns make it a gRPC method whose requests
 * are a stream: Nest marks those of `@GrpcStreamMethod` and
 * `@GrpcStreamCall` with their `streaming` kind.
 */
export function isGrpcRequestStream(patterns: unknown): boolean {
  return (
    Array.isArray(patterns) &&
    patterns.some((pattern) => {
      const streaming = (pattern as { streaming?: unknown } | null)?.streaming;
      return streaming === 'rx_stream' || streaming === 'pt_stream';
    })
  );
}

/**
 * The same refusal when a call's requests arrive as a stream (an
 * `Observable`, as Nest hands a `@GrpcStreamMethod` handler its requests),
 * in case a handler escaped the check made at boot: it is refused before
 * it runs, never run unprotected.
 */
export function grpcStreamRefusal(data: unknown): string | undefined {
  return isObservable(data) ? GRPC_REQUEST_STREAM : undefined;
}
