import { createRequire } from 'node:module';
import { from, isObservable, type Observable } from 'rxjs';
import type { IdempotencyCoordinator, RunRequest } from '../../coordinator';
import { runInExecution } from '../../current-execution';
import type { Execution } from '../../execution';
import { idempotencyErrorOf, statusOf } from '../error-status';
import { problemOf } from '../problem-details';
import type { IdempotentRoute } from '../idempotent-routes';
import { decodeRpcResult, encodeRpcError, encodeRpcValues, encodeUnstorable, tooLargeError, type StoredBound } from './rpc-result';
import { heldStream, type StreamBounds, type StreamEnd } from './rpc-stream';
import type { RpcOrigin } from './microservice-transports';

type RpcExceptionClass = new (error: string | object) => Error;
let RpcException: RpcExceptionClass | undefined;

/**
 * An error as a message handler must throw it for its caller to see it:
 * Nest's RPC layer passes only `RpcException`s on (anything else becomes
 * "Internal server error"), so the package's errors travel as one carrying
 * their problem document, or as the message's transport shapes a refusal
 * (a gRPC status: see `MicroserviceTransport.refusal`).
 * `@nestjs/microservices` is loaded here, where a message is being handled,
 * so it stays optional for HTTP-only apps.
 */
export function toRpcError(error: unknown, origin?: RpcOrigin): unknown {
  const idempotency = idempotencyErrorOf(error);
  if (!idempotency) return error;
  const problem = problemOf(idempotency);
  const payload = origin?.transport.refusal?.(problem, origin.context) ?? problem.document;
  return Object.assign(rpcException(payload), { cause: idempotency });
}

function rpcException(payload: unknown): Error {
  RpcException ??= (createRequire(__filename)('@nestjs/microservices') as { RpcException: RpcExceptionClass }).RpcException;
  return new RpcException(payload as object);
}

/**
 * Run a message handler under the coordinator: what it emitted is stored and
 * replayed as the same stream of values; a final error it threw (an
 * `HttpException`, an `RpcException` whose payload carries a status, or one
 * whose status the message's transport reads: see
 * `MicroserviceTransport.statusOf`) is stored and thrown again; anything
 * else releases the key. What a record stores is bounded by
 * `bounds.maxBytes` of stored JSON (UTF-8 bytes): the value(s) or the error
 * with a few bytes of framing (`{"values":[...]}`), a binary value such as a
 * `Buffer` counted as its JSON (about four times its bytes). A larger result
 * or final error still reaches its caller, and its record stores a
 * `result-not-stored` instead, so a retry is refused rather than running the
 * handler again. A stream of values (a gRPC server-streaming method) is held
 * up to that bound: past it, it goes to its caller as it comes; and a caller
 * that goes away before it ended stops it and releases the key (see
 * `heldStream`).
 */
export async function runRpc(
  coordinator: IdempotencyCoordinator,
  route: IdempotentRoute,
  request: RunRequest,
  invoke: (execution: Execution) => unknown,
  origin?: RpcOrigin,
  bounds: StreamBounds = { maxBytes: Number.POSITIVE_INFINITY },
): Promise<Observable<unknown>> {
  let execution: Execution;
  try {
    const begun = await coordinator.begin(request, route.policy);
    if (begun.replay !== undefined) return from(decodeRpcResult(begun.replay, rpcException));
    execution = begun.execution;
  } catch (error) {
    throw toRpcError(error, origin);
  }
  const failed = (error: unknown) => endFailed(execution, error, bounds.maxBytes, origin);
  let result: unknown;
  try {
    // An async handler may resolve to its stream of values (a gRPC server-streaming method), as Nest allows.
    result = await runInExecution(execution, () => invoke(execution));
  } catch (error) {
    return failed(error);
  }
  if (isObservable(result)) {
    return heldStream(result, execution, bounds, {
      completed: (end) => endCompleted(execution, end, { maxBytes: bounds.maxBytes, what: 'stream of values' }, origin),
      failed,
      abandoned: () => void execution.release().catch(() => undefined), // no caller is left to tell; the lease ends it
    });
  }
  await endCompleted(execution, { values: [result], last: result }, { maxBytes: bounds.maxBytes, what: 'result' }, origin);
  return from([result]);
}

/**
 * The handler threw: its final error is stored (a `result-not-stored` when
 * larger than `maxBytes`), anything else releases the key; the error is thrown on.
 */
async function endFailed(execution: Execution, error: unknown, maxBytes: number, origin: RpcOrigin | undefined): Promise<never> {
  const status = statusOf(error) ?? origin?.transport.statusOf?.(error);
  if (status !== undefined && execution.isFinal({ statusCode: status })) {
    const { stored, unstorable } = encodeRpcError(origin?.transport.storable?.(error) ?? error, status, maxBytes);
    await complete(execution, stored, unstorable, origin);
  } else {
    await execution.release();
  }
  throw error;
}

/** The handler's values ended: stored when the last is final (or a `result-not-stored` when they outgrew `bound`), else released. */
async function endCompleted(execution: Execution, end: StreamEnd, bound: StoredBound, origin: RpcOrigin | undefined): Promise<void> {
  // What the handler returned is data, a success: a `statusCode` field of it (a webhook's delivery) is no status of this answer.
  if (!execution.isFinal({ statusCode: 200, body: end.last })) return execution.release();
  const { stored, unstorable } = end.values ? encodeRpcValues(end.values, bound) : encodeUnstorable(tooLargeError(bound));
  await complete(execution, stored, unstorable, origin);
}

async function complete(execution: Execution, stored: string, unstorable: unknown, origin: RpcOrigin | undefined): Promise<void> {
  try {
    await execution.complete(stored, unstorable);
  } catch (error) {
    throw toRpcError(error, origin);
  }
}
