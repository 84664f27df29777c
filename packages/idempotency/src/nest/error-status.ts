import { HttpException } from '@nestjs/common';
import { isIdempotencyError, type IdempotencyError } from '../errors';

/**
 * The package error behind `error`, however it travelled: as itself, as the
 * `IdempotencyException` an HTTP handler got, or as the `RpcException` a
 * message handler got (see `toRpcError`).
 *
 * @public
 */
export function idempotencyErrorOf(error: unknown): IdempotencyError | undefined {
  if (isIdempotencyError(error)) return error;
  const cause = (error as { cause?: unknown } | null)?.cause;
  return isIdempotencyError(cause) ? cause : undefined;
}

/**
 * The HTTP status an error stands for: a package error's, an
 * `HttpException`'s, or the numeric `status`/`statusCode` of an
 * `RpcException`'s payload. `undefined` when it carries none (an unexpected
 * error). Read it with `statusOutcome` to know whether the outcome is final
 * and whether a retry may succeed.
 *
 * @public
 */
export function statusOf(error: unknown): number | undefined {
  const idempotency = idempotencyErrorOf(error);
  if (idempotency) return idempotency.httpStatus;
  if (error instanceof HttpException) return error.getStatus();
  const getError = (error as { getError?: unknown } | null)?.getError;
  const payload = typeof getError === 'function' ? (getError as () => unknown).call(error) : undefined;
  const status = (payload as { status?: unknown } | undefined)?.status ?? (payload as { statusCode?: unknown } | undefined)?.statusCode;
  return typeof status === 'number' && Number.isInteger(status) ? status : undefined;
}
