import { HttpException, HttpStatus } from '@nestjs/common';
import { STATUS_CODES } from 'node:http';
import { isIdempotencyError } from '../errors';
import { callerDetail } from './caller-detail';

/**
 * An RFC 9457 problem document, served as `application/problem+json`.
 *
 * @public
 */
export interface ProblemDocument {
  type: string;
  title: string;
  status: number;
  detail?: string;
  instance?: string;
  /** Extension: each message of a validation failure (class-validator). */
  errors?: string[];
  /**
   * Extension: the status of each check of a failed health check
   * (`@nestjs/terminus`'s `details`), so a 503 from `/health` says what is
   * down. Only the statuses: an indicator's message (a host, a port) stays
   * in the log terminus writes.
   */
  checks?: Record<string, { status: string }>;
}

/** A problem document and the headers that go with it (`Retry-After`). */
export interface Problem {
  document: ProblemDocument;
  headers: Record<string, string>;
  /** True when the error was not expected: it is logged, and its text withheld. */
  unexpected: boolean;
}

/**
 * Map any thrown value to the problem it stands for: an idempotency error to
 * its own status and `type`; an `HttpException` to its status; a body-parsing
 * error of Fastify or Express (invalid JSON, body too large) to the 4xx it
 * carries; anything else to a 500 that says nothing of the internals.
 */
export function toProblem(exception: unknown, instance?: string): Problem {
  if (isIdempotencyError(exception)) {
    const retryAfter = (exception as { retryAfterSeconds?: unknown }).retryAfterSeconds;
    return {
      document: problem({ status: exception.httpStatus, type: exception.problemType, detail: callerDetail(exception), instance }),
      headers: typeof retryAfter === 'number' ? { 'retry-after': String(retryAfter) } : {},
      unexpected: false,
    };
  }
  if (exception instanceof HttpException && isIdempotencyError(exception.cause)) {
    const document = exception.getResponse() as ProblemDocument;
    const retryAfter = (exception as { retryAfterSeconds?: unknown }).retryAfterSeconds;
    return {
      document: problem({ ...document, instance }),
      headers: typeof retryAfter === 'number' ? { 'retry-after': String(retryAfter) } : {},
      unexpected: false,
    };
  }
  if (exception instanceof HttpException) {
    const fields = describe(exception.getResponse(), exception.message);
    return { document: problem({ status: exception.getStatus(), ...fields, instance }), headers: {}, unexpected: false };
  }
  const status = clientErrorStatus(exception);
  if (status !== undefined) {
    const detail = (exception as Error).message;
    return { document: problem({ status, detail, instance }), headers: {}, unexpected: false };
  }
  const document = problem({ status: HttpStatus.INTERNAL_SERVER_ERROR, detail: 'An unexpected error occurred', instance });
  return { document, headers: {}, unexpected: true };
}

/** Members always in the same order, so equal problems serialise to equal bytes. */
function problem(fields: Partial<ProblemDocument> & { status: number }): ProblemDocument {
  const { status, type = 'about:blank', title = STATUS_CODES[status] ?? 'Error', detail, instance, errors, checks } = fields;
  const document: ProblemDocument = { type, title, status };
  if (detail !== undefined) document.detail = detail;
  if (instance !== undefined) document.instance = instance;
  if (errors !== undefined) document.errors = errors;
  if (checks !== undefined) document.checks = checks;
  return document;
}

/** The statuses of terminus's `details` (`{ name: { status, ...more } }`), or `undefined` when `details` is not that. */
function healthChecks(details: unknown): Record<string, { status: string }> | undefined {
  if (typeof details !== 'object' || details === null || Array.isArray(details)) return undefined;
  const checks: Record<string, { status: string }> = {};
  for (const [name, result] of Object.entries(details)) {
    const status = (result as { status?: unknown } | null)?.status;
    if (typeof status !== 'string') return undefined;
    checks[name] = { status };
  }
  return Object.keys(checks).length > 0 ? checks : undefined;
}

/** Nest's `{ statusCode, message, error }` body: `message` may be a list (ValidationPipe); or terminus's failed health check. */
function describe(response: string | object, fallback: string): Partial<ProblemDocument> {
  if (typeof response === 'string') return { detail: response };
  const { message, error, status, details } = response as Record<string, unknown>;
  // A failed health check of @nestjs/terminus: { status: 'error', info, error, details }.
  const checks = status === 'error' ? healthChecks(details) : undefined;
  if (checks) {
    const down = Object.keys(checks).filter((name) => checks[name]?.status !== 'up');
    return { detail: `Health check failed: ${down.join(', ') || 'a check'} ${down.length > 1 ? 'are' : 'is'} down`, checks };
  }
  const title = typeof error === 'string' ? error : undefined;
  if (Array.isArray(message)) {
    const errors = message.map(String);
    return { title, detail: errors.join('; '), errors };
  }
  return { title, detail: typeof message === 'string' ? message : fallback };
}

/**
 * The 4xx status of an error raised by the HTTP layer before any handler ran:
 * Fastify's (`FST_ERR_CTP_*`, `statusCode`) and body-parser's (`expose`,
 * `status`, e.g. `entity.too.large`). Their messages are written for clients.
 */
function clientErrorStatus(exception: unknown): number | undefined {
  if (!(exception instanceof Error)) return undefined;
  const error = exception as Error & { statusCode?: unknown; status?: unknown; expose?: unknown; code?: unknown };
  const status = typeof error.statusCode === 'number' ? error.statusCode : error.status;
  if (typeof status !== 'number' || status < 400 || status > 499) return undefined;
  const fromFastify = error.name === 'FastifyError' || (typeof error.code === 'string' && error.code.startsWith('FST_'));
  return fromFastify || error.expose === true ? status : undefined;
}
