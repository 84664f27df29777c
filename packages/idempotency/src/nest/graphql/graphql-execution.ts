import { isObservable, lastValueFrom } from 'rxjs';
import type { IdempotencyCoordinator, RunRequest } from '../../coordinator';
import { runInExecution } from '../../current-execution';
import type { Execution } from '../../execution';
import { HeaderName } from '../../header-name';
import type { IdempotentRoute } from '../idempotent-routes';
import type { GraphqlCall } from './graphql-call';
import { toGraphqlError } from './graphql-error';
import { snapshotOf } from './graphql-snapshot';
import { decodeGraphqlResult, encodeGraphqlError, encodeGraphqlValue, graphqlErrorStatus } from './graphql-result';

/**
 * Run a mutation's resolver under the coordinator. What it returned is
 * stored as JSON and, on replay, returned again as the resolver's result:
 * GraphQL applies the replaying request's own selection set to it, and the
 * field resolvers of its type (`@ResolveField`) run again, so they must only
 * read. A final error it threw (an `HttpException`, or a `GraphQLError`
 * whose `extensions` carry a `status`) is stored and thrown again; any other
 * error releases the key. A result or final error whose stored JSON is
 * larger than `maxBytes` (UTF-8 bytes: the value or the error with a few
 * bytes of framing, `{"value":...}`; a binary value such as a `Buffer`
 * counted as its JSON, about four times its bytes) still reaches the caller,
 * and its record stores a `result-not-stored` instead, so a retry is refused
 * rather than running the resolver again. A replay sets
 * `Idempotency-Replayed: true` on the HTTP response. The operation's
 * `isFinal` sees a returned value as an HTTP answer would be seen:
 * `{ statusCode: 200, body }`.
 */
export async function runGraphql(
  coordinator: IdempotencyCoordinator,
  route: IdempotentRoute,
  request: RunRequest,
  invoke: (execution: Execution) => unknown,
  call: GraphqlCall,
  maxBytes = Number.POSITIVE_INFINITY,
): Promise<unknown> {
  let execution: Execution;
  try {
    const begun = await coordinator.begin(request, route.policy);
    if (begun.replay !== undefined) {
      if (call.response && !call.response.headersSent) call.response.setHeader(HeaderName.Replayed, 'true');
      return decodeGraphqlResult(begun.replay);
    }
    execution = begun.execution;
  } catch (error) {
    throw toGraphqlError(error, call.response);
  }
  let value: unknown;
  try {
    value = await runInExecution(execution, () => {
      const result = invoke(execution);
      return isObservable(result) ? lastValueFrom(result) : result;
    });
  } catch (error) {
    const status = graphqlErrorStatus(error);
    if (status !== undefined && execution.isFinal({ statusCode: status })) {
      const { stored, unstorable } = encodeGraphqlError(error, status, maxBytes);
      await complete(execution, stored, unstorable, call);
    } else {
      await execution.release();
    }
    throw error;
  }
  // What the resolver returned is data, answered with HTTP 200: a `statusCode` field of it (a webhook's delivery) is no status of this answer.
  if (!execution.isFinal({ statusCode: 200, body: value })) {
    await execution.release();
    return value;
  }
  const { stored, unstorable } = encodeGraphqlValue(snapshotOf(value, call.info.returnType), maxBytes);
  await complete(execution, stored, unstorable, call);
  return value;
}

async function complete(execution: Execution, stored: string, unstorable: unknown, call: GraphqlCall): Promise<void> {
  try {
    await execution.complete(stored, unstorable);
  } catch (error) {
    throw toGraphqlError(error, call.response);
  }
}
