import { HttpException, HttpStatus } from '@nestjs/common';
import { STATUS_CODES } from 'node:http';
import { isIdempotencyError, type IdempotencyError } from '../errors';
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

/**
 * What an error stands for, on any transport: its status, the headers that
 * go with it (`Retry-After`, where the error says when to retry) and its
 * problem document. HTTP answers with all three, a message handler's caller
 * receives the document (see `rpc/`).
 */
export interface Problem {
  status: number;
  headers: Record<string, string>;
  document: ProblemDocument;
  /** True when the error was not expected: it is logged, and its text withheld. */
  unexpected: boolean;
}

/**
 * The one place an error becomes a problem. An idempotency error (or an
 * exception carrying one, as `IdempotencyException` does) maps to its own
 * status, `type` and `Retry-After`, with a detail fit for its caller (see
 * `callerDetail`); an `HttpException` to its status; a body-parsing error of
 * Fastify or Express (invalid JSON, body too large) to the 4xx it carries;
 * anything else to a 500 that says nothing of the internals.
 */
export function problemOf(error: unknown, instance?: string): Problem {
  const idempotency = isIdempotencyError(error) ? error : error instanceof HttpException ? idempotencyCause(error) : undefined;
  if (idempotency) {
    const retryAfter = (idempotency as { retryAfterSeconds?: unknown }).retryAfterSeconds;
    const status = idempotency.httpStatus;
    return {
      status,
      headers: typeof retryAfter === 'number' ? { 'retry-after': String(retryAfter) } : {},
      document: problem({ status, type: idempotency.problemType, detail: callerDetail(idempotency), instance }),
      unexpected: false,
    };
  }
  if (error instanceof HttpException) {
    const status = error.getStatus();
    const fields = describe(error.getResponse(), error.message);
    return { status, headers: {}, document: problem({ status, ...fields, instance }), unexpected: false };
  }
  const status = clientErrorStatus(error);
  if (status !== undefined) {
    const detail = (error as Error).message;
    return { status, headers: {}, document: problem({ status, detail, instance }), unexpected: false };
  }
  const internal = HttpStatus.INTERNAL_SERVER_ERROR;
  return {
    status: internal,
    headers: {},
    document: problem({ status: internal, detail: 'An unexpected error occurred', instance }),
    unexpected: true,
  };
}

/** The idempotency error an `HttpException` stands for (an `IdempotencyException`'s), if any. */
function idempotencyCause(exception: HttpException): IdempotencyError | undefined {
  return isIdempotencyError(exception.cause) ? exception.cause : undefined;
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
