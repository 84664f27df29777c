/**
 * Every error the idempotency package raises
 * (`@idempotency-chain/idempotency/errors`; the core entry re-exports the
 * ones a caller acts on). Each carries a marker property so that
 * `isIdempotencyError` still recognises it when two copies of the package
 * are loaded; each stands for exactly one HTTP status, which the NestJS
 * integration turns into an `HttpException`. `InvalidPolicyError`, a
 * configuration mistake caught at boot, is the one that stands for none.
 */

const marker = Symbol.for('idempotency-chain.idempotency.error');

/**
 * Give a class its name in writing. The guard tells the classes of two
 * copies of the package apart by name, and a bundler that minifies an app
 * renames classes (`KeyReusedError` would be `t` in one copy, `n` in the
 * other, and another class `t` too); a name set here is kept.
 */
function keepName(kind: abstract new (...args: never[]) => unknown, name: string): void {
  Object.defineProperty(kind, 'name', { value: name, configurable: true });
}

/**
 * Root of every idempotency error. Test errors with {@link isIdempotencyError}
 * (`isIdempotencyError(error, InFlightError)` for one class) rather than
 * `instanceof`. An app can load two copies of this package (two versions
 * under `node_modules`, one pulled in by the http-client or by a library of
 * yours), and then has two `InFlightError` classes; `instanceof` knows only
 * its own, the guard recognises both, by the marker every error carries and
 * the class's name. The classes stay exported for the types, for the guard
 * to be given, and for a store of your own to throw (`RecordVersionError`
 * for a record in a format it cannot read).
 *
 * @public
 */
export abstract class IdempotencyError extends Error {
  static {
    keepName(this, 'IdempotencyError');
  }
  readonly [marker] = true;
  /** Stable problem type, used as the RFC 9457 `type` member. */
  abstract readonly problemType: string;
  /** The HTTP status this error stands for. */
  abstract readonly httpStatus: number;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/**
 * The key header is malformed (empty, too long, not printable ASCII). 400.
 *
 * @public
 */
export class InvalidKeyError extends IdempotencyError {
  static {
    keepName(this, 'InvalidKeyError');
  }
  readonly problemType = 'urn:idempotency-chain:problem:invalid-key';
  readonly httpStatus = 400;
}

/**
 * The request cannot be fingerprinted (a body nested deeper than the
 * canonical form allows). 400, before any record is claimed.
 *
 * @public
 */
export class InvalidRequestError extends IdempotencyError {
  static {
    keepName(this, 'InvalidRequestError');
  }
  readonly problemType = 'urn:idempotency-chain:problem:invalid-request';
  readonly httpStatus = 400;
}

/**
 * The operation requires a key and the request carried none. 400.
 *
 * @public
 */
export class MissingKeyError extends IdempotencyError {
  static {
    keepName(this, 'MissingKeyError');
  }
  readonly problemType = 'urn:idempotency-chain:problem:missing-key';
  readonly httpStatus = 400;
}

/**
 * The key was used before with a different request body. 422.
 *
 * @public
 */
export class KeyReusedError extends IdempotencyError {
  static {
    keepName(this, 'KeyReusedError');
  }
  readonly problemType = 'urn:idempotency-chain:problem:key-reused';
  readonly httpStatus = 422;
}

/**
 * Another execution holds the key and this request may not (or can no longer)
 * wait for it. 409 with `Retry-After`.
 *
 * @public
 */
export class InFlightError extends IdempotencyError {
  static {
    keepName(this, 'InFlightError');
  }
  readonly problemType = 'urn:idempotency-chain:problem:in-flight';
  readonly httpStatus = 409;
  constructor(
    message: string,
    /** Seconds after which a retry is worth making. */
    readonly retryAfterSeconds: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * This execution lost its lease before it could store its result: another
 * attempt owns the key now. 409: the caller's retry is answered by the owner.
 *
 * @public
 */
export class LeaseLostError extends IdempotencyError {
  static {
    keepName(this, 'LeaseLostError');
  }
  readonly problemType = 'urn:idempotency-chain:problem:lease-lost';
  readonly httpStatus = 409;
  readonly retryAfterSeconds = 1;
}

/**
 * The store could not be reached and the operation fails closed. 503.
 *
 * @public
 */
export class StoreUnavailableError extends IdempotencyError {
  static {
    keepName(this, 'StoreUnavailableError');
  }
  readonly problemType = 'urn:idempotency-chain:problem:store-unavailable';
  readonly httpStatus = 503;
  readonly retryAfterSeconds = 1;
}

/**
 * The caller's scope could not be resolved (no authenticated principal, or
 * the app's resolver returned nothing), so the request cannot be told apart
 * from another caller's. 500: the app must decide what scopes its records.
 *
 * @public
 */
export class ScopeUnresolvedError extends IdempotencyError {
  static {
    keepName(this, 'ScopeUnresolvedError');
  }
  readonly problemType = 'urn:idempotency-chain:problem:scope-unresolved';
  readonly httpStatus = 500;
}

/**
 * The request was executed, but its result could not be stored as it was
 * (not serialisable, or too large): the record holds this error instead, so
 * a retry never runs the side effect again. 500.
 *
 * @public
 */
export class ResultNotStoredError extends IdempotencyError {
  static {
    keepName(this, 'ResultNotStoredError');
  }
  readonly problemType = 'urn:idempotency-chain:problem:result-not-stored';
  readonly httpStatus = 500;
}

/**
 * A stored answer is compressed in an encoding the client does not accept,
 * and decoded it would be larger than an answer may be: decoding it for
 * every such replay would cost the server that much memory each time. The
 * client can ask for the encoding (`Accept-Encoding`). 406.
 *
 * @public
 */
export class EncodingNotAcceptableError extends IdempotencyError {
  static {
    keepName(this, 'EncodingNotAcceptableError');
  }
  readonly problemType = 'urn:idempotency-chain:problem:encoding-not-acceptable';
  readonly httpStatus = 406;
}

/**
 * A stored answer is compressed in an encoding the client does not accept,
 * and this process already decompresses as many bytes of replays as it may
 * at once (`maxDecompressingBytes`). The stored answer is intact: a retry in
 * a moment gets it, and a client that accepts the encoding gets it at once.
 * 503 with `Retry-After`.
 *
 * @public
 */
export class DecompressionBusyError extends IdempotencyError {
  static {
    keepName(this, 'DecompressionBusyError');
  }
  readonly problemType = 'urn:idempotency-chain:problem:decompression-busy';
  readonly httpStatus = 503;
  readonly retryAfterSeconds = 1;
}

/**
 * The request was executed before, but its stored answer cannot be read: it
 * does not decrypt under the coordinator's keyring (a key missing from it, a
 * wrong key, changed bytes, an answer copied from another record), or it is
 * stored in clear where only encrypted answers are accepted. It is never
 * replayed, and the request is not executed again (its side effect ran);
 * the record is left as it is, so once the keyring is put right its retries
 * replay. Reported as `unreadable`, with the reason. 500.
 *
 * @public
 */
export class StoredAnswerUnreadableError extends IdempotencyError {
  static {
    keepName(this, 'StoredAnswerUnreadableError');
  }
  readonly problemType = 'urn:idempotency-chain:problem:stored-answer-unreadable';
  readonly httpStatus = 500;
}

/** How a {@link RecordVersionError} names what it found, for the values that are not a version. */
const RECORD_FOUND: Readonly<Record<string, string>> = {
  none: 'carries no format version (it predates them)',
  damaged: 'is damaged (its layout does not parse)',
  counter: 'has a damaged epoch counter (not a number, or one no later epoch fits after)',
};

/**
 * A store met a record in a format version this library does not read: one
 * written by a newer release of this package, or by an older one from
 * before records carried a version. It is refused rather than read: never
 * replayed, never executed again (it may stand for a side effect that ran),
 * never overwritten; the record is left as it is, for the release that
 * wrote it. Reported as `unreadable`. 500.
 *
 * @public
 */
export class RecordVersionError extends IdempotencyError {
  static {
    keepName(this, 'RecordVersionError');
  }
  readonly problemType = 'urn:idempotency-chain:problem:record-version';
  readonly httpStatus = 500;
  constructor(
    /**
     * The version the record carries, as found (`none` for a record from before versions, `damaged` for one whose
     * layout does not parse, `counter` for a Redis epoch counter that no claim can go on from).
     */
    readonly foundVersion: string,
    /** The version this library reads and writes. */
    readonly supportedVersion: number,
    options?: { cause?: unknown },
  ) {
    super(
      `An idempotency record ${RECORD_FOUND[foundVersion] ?? `is in format version ${foundVersion}`}, ` +
        `but this library reads version ${supportedVersion} only: it is neither replayed, executed again nor overwritten`,
      options,
    );
  }
}

/**
 * A store's schema is not the one this library needs: PostgreSQL tables from
 * an older release (a migration not applied yet), or none at all. The store
 * answers, so this is a deploy to finish, not an outage to ride out: the
 * request is refused, never run unprotected (not even under `fail-open`),
 * and the store's `ping()` rejects with it, so its health check is down
 * until `migrate()` has run. 500.
 *
 * @public
 */
export class SchemaVersionError extends IdempotencyError {
  static {
    keepName(this, 'SchemaVersionError');
  }
  readonly problemType = 'urn:idempotency-chain:problem:schema-version';
  readonly httpStatus = 500;
  constructor(
    /** The schema the store was given. */
    readonly schema: string,
    /** The newest migration applied to it (0 when it has none, or when the store's role may not read which). */
    readonly foundVersion: number,
    /** The migration this library needs. */
    readonly requiredVersion: number,
    options?: { cause?: unknown },
  ) {
    super(
      `The idempotency store's schema "${schema}" is at migration ${foundVersion}, but this library needs ` +
        `${requiredVersion}: run migrate() (or set migrateOnConnect); requests are refused until then`,
      options,
    );
  }
}

/**
 * The store answers but refuses this process: its credentials are rejected
 * (a PostgreSQL role that may not log in, Redis `WRONGPASS` or `NOAUTH`),
 * or it may not use the store's tables, keys or commands (PostgreSQL
 * `permission denied`, a Redis ACL `NOPERM`). Like a schema that is behind
 * ({@link SchemaVersionError}), this is configuration to put right, not an
 * outage to ride out: the request is refused, never run unprotected (not
 * even under `fail-open`, where every retry of a charge would run again),
 * and the store's `ping()` rejects with it, so its health check is down
 * until the grant or the credentials are fixed. The message names what is
 * missing, never a secret. 500.
 *
 * @public
 */
export class StoreRefusedError extends IdempotencyError {
  static {
    keepName(this, 'StoreRefusedError');
  }
  readonly problemType = 'urn:idempotency-chain:problem:store-refused';
  readonly httpStatus = 500;
}

/**
 * A policy that could give two concurrent executions of one key, or none at
 * all, or an encryption keyring that cannot be used. Thrown where the
 * coordinator or the module is built, never for a request: a `RangeError`
 * (an argument out of range), not an {@link IdempotencyError}, since it
 * stands for no HTTP status and no caller's retry can change it.
 *
 * @public
 */
export class InvalidPolicyError extends RangeError {
  override name = 'InvalidPolicyError';
}

/**
 * True for an error raised by this package, also one raised by another
 * loaded copy of it (where `instanceof` is false). Given one of its error
 * classes, true only for an error of that class, and narrowed to it.
 *
 * @example
 * try {
 *   return await idempotency.run(request, (execution) => charge(execution));
 * } catch (error) {
 *   if (isIdempotencyError(error, InFlightError)) return retryIn(error.retryAfterSeconds);
 *   if (isIdempotencyError(error)) return reply(error.httpStatus, error.problemType);
 *   throw error;
 * }
 *
 * @public
 */
export function isIdempotencyError<T extends IdempotencyError = IdempotencyError>(
  error: unknown,
  kind?: abstract new (...args: never[]) => T,
): error is T {
  if (typeof error !== 'object' || error === null || !(marker in error)) return false;
  if (kind === undefined || kind.name === IdempotencyError.name || error instanceof kind) return true;
  return (error as { name?: unknown }).name === kind.name;
}
