import { HttpException } from '@nestjs/common';
import { STATUS_CODES } from 'node:http';
import { isIdempotencyError, type IdempotencyError } from '../errors';
import { callerDetail } from './caller-detail';
import type { HttpAnswer } from './http-answer';

/** The RFC 9457 problem document an `IdempotencyException` answers with. */
interface IdempotencyProblem {
  type: string;
  title: string;
  status: number;
  detail: string;
}

/**
 * Every error of this package, as the `HttpException` Nest answers with its
 * status in any app, with no filter registered: 400 (key), 409 (in flight,
 * with `Retry-After`), 422 (key reused), 503 (store down). Its response body
 * is the problem document; `ProblemDetailsFilter` serves it as
 * `application/problem+json`, Nest's own filter as JSON.
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
    const problem: IdempotencyProblem = {
      type: error.problemType,
      title: STATUS_CODES[error.httpStatus] ?? 'Error',
      status: error.httpStatus,
      detail: callerDetail(error),
    };
    super(problem, error.httpStatus, { cause: error });
    this.error = error;
    this.problemType = error.problemType;
    const retryAfter = (error as { retryAfterSeconds?: unknown }).retryAfterSeconds;
    this.retryAfterSeconds = typeof retryAfter === 'number' ? retryAfter : undefined;
  }
}

/** An error of this package as its `IdempotencyException`; anything else as it is. */
export function toHttpException(error: unknown): unknown {
  return isIdempotencyError(error) ? new IdempotencyException(error) : error;
}

/** An error of this package as a whole HTTP answer: its problem document, and `Retry-After`. */
export function problemAnswer(exception: IdempotencyException): HttpAnswer {
  const headers: HttpAnswer['headers'] = { 'content-type': 'application/problem+json' };
  if (exception.retryAfterSeconds !== undefined) headers['retry-after'] = String(exception.retryAfterSeconds);
  return { status: exception.getStatus(), headers, body: JSON.stringify(exception.getResponse()) };
}
