import { createRequire } from 'node:module';
import { HttpException } from '@nestjs/common';
import { ResultNotStoredError } from '../../errors';
import { statusOf } from '../error-status';
import { IdempotencyException } from '../idempotency.exception';
import { encodeResult } from '../rpc/rpc-result';

/**
 * What a mutation's record holds: the value its resolver returned (as
 * JSON), or the final error it threw - an `HttpException`'s status and
 * response, or a `GraphQLError`'s message and extensions.
 */
type StoredGraphqlResult =
  | { value: unknown }
  | { error: { status: number; response: unknown } }
  | { graphqlError: { message: string; extensions: Record<string, unknown> } }
  | { unstorable: string };

type GraphQLErrorClass = new (message: string, options: { extensions: Record<string, unknown> }) => Error;

/**
 * The HTTP status a resolver's error stands for: an `HttpException`'s (or
 * the other errors `statusOf` reads), else a numeric `status` or
 * `http.status` in its GraphQL `extensions` (Apollo's convention);
 * `undefined` when it says none, and the key is released.
 */
export function graphqlErrorStatus(error: unknown): number | undefined {
  const status = statusOf(error);
  if (status !== undefined) return status;
  const extensions = (error as { extensions?: { status?: unknown; http?: { status?: unknown } } } | null)?.extensions;
  const candidate = extensions?.status ?? extensions?.http?.status;
  return typeof candidate === 'number' && Number.isInteger(candidate) ? candidate : undefined;
}

/**
 * The value a resolver returned, as stored; a value JSON cannot hold (a
 * `BigInt`, a cycle), or whose record is larger than `maxBytes`, is stored
 * as `unstorable`.
 */
export function encodeGraphqlValue(value: unknown, maxBytes = Number.POSITIVE_INFINITY): { stored: string; unstorable?: unknown } {
  return encodeResult({ value: value ?? null }, { maxBytes, what: 'result' });
}

/**
 * A final error the resolver threw, stored to be thrown again on replay;
 * one whose record is larger than `maxBytes` is stored as `unstorable`.
 */
export function encodeGraphqlError(
  error: unknown,
  status: number,
  maxBytes = Number.POSITIVE_INFINITY,
): { stored: string; unstorable?: unknown } {
  const bound = { maxBytes, what: 'error' };
  if (error instanceof HttpException) return encodeResult({ error: { status, response: error.getResponse() } }, bound);
  const { message, extensions } = error as { message?: unknown; extensions?: unknown };
  return encodeResult(
    {
      graphqlError: {
        message: typeof message === 'string' ? message : 'Error',
        extensions: { ...(typeof extensions === 'object' && extensions !== null ? extensions : {}), status },
      },
    },
    bound,
  );
}

/**
 * The stored value, as the resolver's result (GraphQL then applies the
 * replaying request's own selection set to it), or the stored error, thrown
 * again as it was thrown: an `HttpException` as one, a `GraphQLError` as one.
 */
export function decodeGraphqlResult(stored: string): unknown {
  const result = JSON.parse(stored) as StoredGraphqlResult;
  if ('value' in result) return result.value;
  if ('error' in result) throw new HttpException(result.error.response as string | object, result.error.status);
  if ('graphqlError' in result) {
    const { GraphQLError } = createRequire(__filename)('graphql') as { GraphQLError: GraphQLErrorClass };
    throw new GraphQLError(result.graphqlError.message, { extensions: result.graphqlError.extensions });
  }
  throw new IdempotencyException(
    new ResultNotStoredError(`This mutation was executed, but its result could not be stored: ${result.unstorable}`),
  );
}
