import { isIdempotencyError, SchemaVersionError, StoreRefusedError, type IdempotencyError } from '../errors';

/**
 * The `detail` a caller is sent for an idempotency error. A store that
 * refuses this service or whose schema is behind is configuration for its
 * operators: the message names roles, schemas, grants and ACL rules (a
 * refused login, PostgreSQL's own text with the client's host), which are
 * for the log and `/health`, not for whoever sent the request. The
 * problem's `type` still says which it is.
 */
export function callerDetail(error: IdempotencyError): string {
  if (isIdempotencyError(error, StoreRefusedError) || isIdempotencyError(error, SchemaVersionError)) {
    return 'The idempotency store cannot serve this service as it is configured; the request was not executed';
  }
  return error.message;
}
