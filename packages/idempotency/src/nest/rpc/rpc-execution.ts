import { createRequire } from 'node:module';
import { from, isObservable, lastValueFrom, toArray, type Observable } from 'rxjs';
import type { IdempotencyCoordinator, RunRequest } from '../../coordinator';
import { runInExecution } from '../../current-execution';
import type { Execution } from '../../execution';
import { idempotencyErrorOf, statusOf } from '../error-status';
import { problemOf } from '../problem-details';
import type { IdempotentRoute } from '../idempotent-routes';
import { decodeRpcResult, encodeRpcError, encodeRpcValues } from './rpc-result';
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
 * `HttpException`, an `RpcException` whose payload carries a status, or
 * one whose status the message's transport reads: see
 * `MicroserviceTransport.statusOf`) is stored and thrown again; anything else
 * releases the key.
 */
export async function runRpc(
  coordinator: IdempotencyCoordinator,
  route: IdempotentRoute,
  request: RunRequest,
  invoke: (execution: Execution) => unknown,
  origin?: RpcOrigin,
): Promise<Observable<unknown>> {
  let execution: Execution;
  try {
    const begun = await coordinator.begin(request, route.policy);
    if (begun.replay !== undefined) return from(decodeRpcResult(begun.replay, rpcException));
    execution = begun.execution;
  } catch (error) {
    throw toRpcError(error, origin);
  }
  let values: unknown[];
  try {
    values = await runInExecution(execution, async () => {
      // An async handler may resolve to its stream of values (a gRPC server-streaming method), as Nest allows.
      const result: unknown = await invoke(execution);
      return isObservable(result) ? lastValueFrom(result.pipe(toArray())) : [result];
    });
  } catch (error) {
    const status = statusOf(error) ?? origin?.transport.statusOf?.(error);
    if (status !== undefined && execution.isFinal({ statusCode: status })) {
      const { stored, unstorable } = encodeRpcError(origin?.transport.storable?.(error) ?? error, status);
      await complete(execution, stored, unstorable, origin);
    } else {
      await execution.release();
    }
    throw error;
  }
  const last = values.at(-1);
  if (!execution.isFinal(last)) {
    await execution.release();
    return from(values);
  }
  const { stored, unstorable } = encodeRpcValues(values);
  await complete(execution, stored, unstorable, origin);
  return from(values);
}

async function complete(execution: Execution, stored: string, unstorable: unknown, origin: RpcOrigin | undefined): Promise<void> {
  try {
    await execution.complete(stored, unstorable);
  } catch (error) {
    throw toRpcError(error, origin);
  }
}
