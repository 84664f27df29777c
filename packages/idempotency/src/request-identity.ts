/**
 * How a hop identified a request it runs idempotently: the record its work
 * is done under. The outbound calls the request makes are keyed from it
 * (`@idempotency-chain/http-client`), so what leaves the hop carries the
 * caller it came from.
 *
 * @public
 */
export interface RequestIdentity {
  /** This hop's service. */
  readonly service: string;
  /** The operation the request runs. */
  readonly operation: string;
  /** The caller's typed scope (`user:42`, see `Scope`); `''` when shared. */
  readonly scope: string;
  /** The record's key: the caller's `Idempotency-Key`, or the fingerprint when it sent none. */
  readonly key: string;
  /** Whether `key` is the request's fingerprint rather than a key the caller chose. */
  readonly fingerprinted: boolean;
}

// A symbol of the process, not of this copy of the package: the runner of one copy, the client of another.
const IDENTITY = Symbol.for('idempotency-chain.idempotency.request-identity');

/** The Node request under a Fastify request (`raw`); an Express request is one already. */
function nodeRequest(request: object): object {
  const raw = (request as { raw?: unknown }).raw;
  return typeof raw === 'object' && raw !== null ? raw : request;
}

/** @internal Called by the runner once it has identified `request` (Fastify or Express, or the Node request). */
export function noteRequestIdentity(request: object, identity: RequestIdentity): void {
  (nodeRequest(request) as { [IDENTITY]?: RequestIdentity })[IDENTITY] = Object.freeze(identity);
}

/**
 * How `request` (Fastify, Express or the Node request) was identified, once
 * an `@Idempotent` route has identified it; `undefined` before, on a route
 * that is not protected, or for a request that runs without a key.
 *
 * @example
 * const identity = requestIdentity(request); // { service: 'gateway', operation: 'gateway.checkout', scope: 'account:acct-7', key: 'k-1', fingerprinted: false }
 *
 * @public
 */
export function requestIdentity(request: object): RequestIdentity | undefined {
  return (nodeRequest(request) as { [IDENTITY]?: RequestIdentity })[IDENTITY];
}
