import type { ExecutionContext } from '@nestjs/common';
import type { IdempotencyCoordinator, RunRequest } from '../../coordinator';
import type { Execution } from '../../execution';
import type { FingerprintInput } from '../../fingerprint';
import type { IdempotentRoute } from '../idempotent-routes';
import type { IdempotencyTransport } from '../transport';
import { grpcStreamRefusal } from './grpc';
import { runRpc, toRpcError } from './rpc-execution';
import { rpcBody, rpcKey } from './rpc-message';
import { rpcOriginOf, type RpcOrigin } from './microservice-transports';

/**
 * Microservice messages, whatever the transport: the key from the
 * transport's headers (see `MicroserviceTransport`) or the payload, the
 * outcome stored as the values the handler emitted or the final error it
 * threw (see `runRpc`), errors as `RpcException`s carrying their problem
 * document or shaped as the transport's callers expect them (gRPC statuses).
 */
export class RpcTransport implements IdempotencyTransport {
  /**
   * @param maxResponseBytes - the stored JSON (UTF-8 bytes) a record may
   * hold of a result, a stream of values (a gRPC server-streaming method) or
   * a final error: the value(s) or the error with a few bytes of framing, a
   * binary value such as a `Buffer` counted as its JSON (about four times its
   * bytes); past it, the caller still gets it and the record stores a
   * `result-not-stored` instead (see `runRpc`).
   */
  constructor(
    private readonly coordinator: IdempotencyCoordinator,
    private readonly maxResponseBytes?: number,
  ) {}

  key(context: ExecutionContext): unknown {
    const rpc = context.switchToRpc();
    return rpcKey(rpc.getData(), rpc.getContext());
  }

  fingerprint(context: ExecutionContext, route: IdempotentRoute): FingerprintInput {
    return { method: 'RPC', path: route.pattern ?? context.getHandler().name, body: rpcBody(context.switchToRpc().getData()) };
  }

  unsupported(context: ExecutionContext): string | undefined {
    return grpcStreamRefusal(context.switchToRpc().getData()) ?? originOf(context)?.transport.unsupported;
  }

  /** A message carries no deadline its consumer could read. */
  deadline(): undefined {
    return undefined;
  }

  /** A message handler's outbound calls carry no request to keep it on. */
  identified(): void {}

  run(context: ExecutionContext, route: IdempotentRoute, request: RunRequest, invoke: (execution?: Execution) => unknown): unknown {
    const origin = originOf(context);
    return runRpc(this.coordinator, route, request, invoke, origin, {
      maxBytes: this.maxResponseBytes ?? Number.POSITIVE_INFINITY,
      whenGone: (listener) => origin?.transport.whenGone?.(context.getArgs(), listener),
    });
  }

  refusal(error: unknown, context: ExecutionContext): unknown {
    return toRpcError(error, originOf(context));
  }
}

/** The transport a handled message came over, with its context. */
function originOf(context: ExecutionContext): RpcOrigin | undefined {
  return rpcOriginOf(context.switchToRpc().getContext<unknown>());
}
