import { HttpException } from '@nestjs/common';
import { ResultNotStoredError } from '../../errors';
import { IdempotencyException } from '../idempotency.exception';

/** What a message handler's record holds: what it emitted, or the final error it threw. */
type StoredRpcResult = { values: unknown[] } | { error: { status: number; payload: unknown; rpc: boolean } } | { unstorable: string };

/**
 * The values a handler emitted, as stored; values JSON cannot hold, or
 * whose record is larger than `bound` allows, are stored as `unstorable`.
 */
export function encodeRpcValues(values: unknown[], bound?: StoredBound): { stored: string; unstorable?: unknown } {
  return encodeResult({ values: values.map((value) => value ?? null) }, bound);
}

/**
 * A final error the handler threw (a 402, a 422), stored to be thrown again
 * on replay; a payload JSON cannot hold (a `BigInt`, a cycle), or whose
 * record is larger than `maxBytes`, is stored as `unstorable`, so the record
 * still completes instead of holding its key.
 */
export function encodeRpcError(
  error: unknown,
  status: number,
  maxBytes = Number.POSITIVE_INFINITY,
): { stored: string; unstorable?: unknown } {
  const rpc = rpcPayload(error) !== undefined && !(error instanceof HttpException);
  const payload = rpc ? rpcPayload(error) : (error as HttpException).getResponse();
  return encodeResult({ error: { status, payload, rpc } }, { maxBytes, what: 'error' });
}

/** What a record may store of a result: its stored JSON's UTF-8 bytes at most, and what the result is, to say so past them. */
export interface StoredBound {
  /** The module's `maxResponseBytes`. */
  maxBytes: number;
  /** What the result is (`result`, `error`), for the reason a larger one is not stored. */
  what: string;
}

/**
 * A handler's result as its record stores it, as JSON; one JSON cannot hold
 * (a `BigInt`, a cycle), or whose JSON is larger than `bound.maxBytes`
 * (UTF-8 bytes), is stored as `{ unstorable: reason }`, with the error as
 * `unstorable`, so the record still completes instead of holding its key
 * and a retry is told the result was not stored. The shape every
 * transport's record shares for that case.
 */
export function encodeResult(result: object, bound?: StoredBound): { stored: string; unstorable?: unknown } {
  let stored: string;
  try {
    stored = JSON.stringify(result);
  } catch (error) {
    return encodeUnstorable(error);
  }
  const bytes = bound ? Buffer.byteLength(stored) : 0;
  if (bound && bytes > bound.maxBytes) return encodeUnstorable(tooLargeError(bound, bytes));
  return { stored };
}

/**
 * Why a result larger than its bound is not stored: `unstorable`, and the
 * reason a retry is told, so whoever reads it knows how large the answer
 * was and which option to raise: `the result is 5,013 bytes, larger than
 * maxResponseBytes (1,024)`. `bytes` is the stored JSON's size, when it is
 * known; a stream no longer held past the bound has none.
 */
export function tooLargeError({ maxBytes, what }: StoredBound, bytes?: number): Error {
  const size = bytes === undefined ? '' : ` ${bytes.toLocaleString('en-US')} bytes,`;
  return new Error(`the ${what} is${size} larger than maxResponseBytes (${maxBytes.toLocaleString('en-US')})`);
}

/** A result that cannot be stored, as its record stores it: `{ unstorable: reason }`, with `error` as `unstorable`. */
export function encodeUnstorable(error: unknown): { stored: string; unstorable: unknown } {
  const reason = error instanceof Error ? error.message : String(error);
  return { stored: JSON.stringify({ unstorable: reason }), unstorable: error };
}

/**
 * The stored values, or the stored error to throw again: an `RpcException`
 * as one (through `toRpcError`), an `HttpException` as one.
 */
export function decodeRpcResult(stored: string, toRpcError: (payload: unknown) => unknown): unknown[] {
  const result = JSON.parse(stored) as StoredRpcResult;
  if ('values' in result) return result.values;
  if ('error' in result) {
    const { status, payload, rpc } = result.error;
    throw rpc ? toRpcError(payload) : new HttpException(payload as string | object, status);
  }
  throw new IdempotencyException(
    new ResultNotStoredError(`This message was handled, but its result could not be stored: ${result.unstorable}`),
  );
}

/** An `RpcException`'s payload (duck-typed: `@nestjs/microservices` stays optional). */
export function rpcPayload(error: unknown): unknown {
  const getError = (error as { getError?: unknown } | null)?.getError;
  return typeof getError === 'function' ? (getError as () => unknown).call(error) : undefined;
}
