import { HttpException } from '@nestjs/common';
import { isIdempotencyError, type IdempotencyError } from '../errors';
import { problemOf } from './problem-details';

/**
 * Every error of this package, as the `HttpException` Nest answers with its
 * status in any app, with no filter registered: 400 (key), 409 (in flight,
 * with `Retry-After`), 422 (key reused), 503 (store down). Its response body
 * is the problem document (see `problemOf`); `ProblemDetailsFilter` serves
 * it as `application/problem+json`, Nest's own filter as JSON.
 *
 * @public
 */
export class IdempotencyException extends HttpException {
  /** The package error this stands for (also its `cause`). */
  readonly error: IdempotencyError;
  /** Stable problem type, e.g. `urn:idempotency-chain:problem:key-reused`. */
  readonly problemType: string;
  /** Seconds after which a retry is worth making, when the error says so (409, 503). */
  readonly retryAfterSeconds: number | undefined;

  constructor(error: IdempotencyError) {
    const { status, headers, document } = problemOf(error);
    super(document, status, { cause: error });
    this.error = error;
    this.problemType = error.problemType;
    this.retryAfterSeconds = headers['retry-after'] === undefined ? undefined : Number(headers['retry-after']);
  }
}

/** An error of this package as its `IdempotencyException`; anything else as it is. */
export function toHttpException(error: unknown): unknown {
  return isIdempotencyError(error) ? new IdempotencyException(error) : error;
}
