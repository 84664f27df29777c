import { HttpException } from '@nestjs/common';
import { ResultNotStoredError } from '../errors';
import { IdempotencyException } from './idempotency.exception';

/** What a message handler's record holds: its value, or the final error it threw. */
type StoredRpcResult = { value: unknown } | { error: { status: number; response: string | object } } | { unstorable: string };

/** A handler's value as stored; a value JSON cannot hold is stored as `unstorable`. */
export function encodeRpcValue(value: unknown): { stored: string; unstorable?: unknown } {
  try {
    return { stored: JSON.stringify({ value: value ?? null } satisfies StoredRpcResult) };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return { stored: JSON.stringify({ unstorable: reason } satisfies StoredRpcResult), unstorable: error };
  }
}

/** A final `HttpException` the handler threw (a 402, a 422), stored to be thrown again on replay. */
export function encodeRpcError(error: HttpException): string {
  return JSON.stringify({ error: { status: error.getStatus(), response: error.getResponse() } } satisfies StoredRpcResult);
}

/** The stored value, or the stored error thrown again. */
export function decodeRpcResult(stored: string): unknown {
  const result = JSON.parse(stored) as StoredRpcResult;
  if ('value' in result) return result.value;
  if ('error' in result) throw new HttpException(result.error.response, result.error.status);
  throw new IdempotencyException(new ResultNotStoredError(`This message was handled, but its result could not be stored: ${result.unstorable}`));
}
