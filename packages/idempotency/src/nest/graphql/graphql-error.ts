import { createRequire } from 'node:module';
import type { ServerResponse } from 'node:http';
import { idempotencyErrorOf } from '../error-status';
import { problemOf, type ProblemDocument } from '../problem-details';

type GraphQLErrorClass = new (message: string, options: { extensions: Record<string, unknown>; originalError?: Error }) => Error;
let GraphQLError: GraphQLErrorClass | undefined;

/**
 * What a refusal of this package carries in its GraphQL error's
 * `extensions`: the error's stable code (`KEY_REUSED`, from its problem
 * type), the HTTP status it stands for, its RFC 9457 problem document and,
 * when it says when to retry (409, 503), `retryAfter` in seconds.
 *
 * @public
 */
export interface IdempotencyErrorExtensions {
  /** The error's stable code: its problem type's last segment, upper snake case (`KEY_REUSED`, `IN_FLIGHT`). */
  code: string;
  /** The HTTP status the error stands for (422 for a reused key); the HTTP response itself stays 200. */
  status: number;
  /** The error's RFC 9457 problem document, as the HTTP adapter answers it. */
  problem: ProblemDocument;
  /** Seconds after which a retry is worth making, when the error says (409, 503). */
  retryAfter?: number;
}

/**
 * An error of this package as a GraphQL resolver answers it: a
 * `GraphQLError` whose `extensions` say what it is (see
 * `IdempotencyErrorExtensions`), which both drivers put in the response's
 * `errors` as they are. The HTTP status of the response is not changed: a
 * GraphQL response over HTTP answers a field's error with 200 and the error
 * in `errors`, the other fields' data beside it. `Retry-After` is also set on
 * the HTTP response when the error has one and the response has not started.
 * `graphql` is loaded here, when a GraphQL operation is being resolved, so
 * it stays optional for apps without it. Anything else is returned as it is.
 */
export function toGraphqlError(error: unknown, response?: ServerResponse): unknown {
  const idempotency = idempotencyErrorOf(error);
  if (!idempotency) return error;
  const { status, headers, document } = problemOf(idempotency);
  const extensions: IdempotencyErrorExtensions = { code: codeOf(idempotency.problemType), status, problem: document };
  const retryAfter = headers['retry-after'];
  if (retryAfter !== undefined) {
    extensions.retryAfter = Number(retryAfter);
    if (response && !response.headersSent) response.setHeader('retry-after', retryAfter);
  }
  GraphQLError ??= (createRequire(__filename)('graphql') as { GraphQLError: GraphQLErrorClass }).GraphQLError;
  return new GraphQLError(document.detail ?? document.title, { extensions: { ...extensions }, originalError: idempotency });
}

/** `urn:idempotency-chain:problem:key-reused` as `KEY_REUSED`, GraphQL's way of writing an error code. */
function codeOf(problemType: string): string {
  return problemType
    .slice(problemType.lastIndexOf(':') + 1)
    .replaceAll('-', '_')
    .toUpperCase();
}
