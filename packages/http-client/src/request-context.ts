import { AsyncLocalStorage } from 'node:async_hooks';
import { HeaderName, parseIdempotencyKey, type RequestIdentity } from '@idempotency-chain/idempotency';

/**
 * What an inbound request hands to every outbound call made on its behalf,
 * the way a trace id travels: the caller's key, how this hop identified the
 * request, and the caller's deadline.
 *
 * @public
 */
export interface RequestContext {
  /** The inbound `Idempotency-Key`, already validated. */
  readonly key?: string;
  /**
   * The record this hop runs the request under (service, operation, the
   * caller's scope, its key or fingerprint), once an `@Idempotent` route has
   * identified it. Outbound keys are derived from it (see `deriveHopKey`),
   * so they carry the caller: without it, a call refuses to forward `key`
   * (unless the client has `forwardUnboundKey`).
   */
  readonly hop?: RequestIdentity;
  /** Epoch ms after which the caller no longer waits. */
  readonly deadline?: number;
}

// One store per process, even when two copies of this package are loaded (a
// middleware from one copy must be seen by a client from the other).
// It holds a reader: the hop identifies the request after the context is bound.
const slot = Symbol.for('idempotency-chain.http-client.request-context-reader');
const registry = globalThis as { [slot]?: AsyncLocalStorage<() => RequestContext> };
const storage = (registry[slot] ??= new AsyncLocalStorage<() => RequestContext>());

/**
 * Run `fn` with `context` bound: every call the client makes inside it — after
 * `await`, in timers, in parallel branches — carries the key and the deadline.
 * Nothing leaks to code outside `fn` or to another request's `fn`.
 *
 * @example
 * runWithRequestContext({ key: 'order-42', deadline: Date.now() + 5_000 }, () =>
 *   client.post('/charges', charge),
 * );
 *
 * @public
 */
export function runWithRequestContext<T>(context: RequestContext, fn: () => T): T {
  const bound = Object.freeze({ ...context });
  return storage.run(() => bound, fn);
}

/** @internal Like `runWithRequestContext`, with a context read when a call asks for it (see the Nest middleware). */
export function runWithRequestContextOf<T>(read: () => RequestContext, fn: () => T): T {
  return storage.run(read, fn);
}

/**
 * The context bound to the code running now, if any.
 *
 * @example
 * const inbound = currentRequestContext()?.key;
 * if (inbound !== undefined) logger.info({ keyHash: hashKey(inbound) }, 'charging');
 *
 * @public
 */
export function currentRequestContext(): RequestContext | undefined {
  return storage.getStore()?.();
}

/**
 * Read the context from inbound headers: `idempotency-key` (validated with the
 * same parser every hop uses) and `request-timeout-ms` (remaining ms, turned
 * into an absolute deadline at `now`).
 *
 * An invalid key binds no key: the server side refuses that request with 400,
 * and the client must not carry the malformed value further down the chain.
 *
 * @example
 * requestContextFromHeaders({ 'idempotency-key': '"k-1"', 'request-timeout-ms': '800' });
 * // { key: 'k-1', deadline: Date.now() + 800 }
 *
 * @public
 */
export function requestContextFromHeaders(
  headers: Record<string, string | string[] | undefined>,
  now: number = Date.now(),
): RequestContext {
  const rawKey = header(headers, HeaderName.IdempotencyKey);
  const rawTimeout = header(headers, HeaderName.RequestTimeout);
  const key = rawKey === undefined ? undefined : validKey(rawKey);
  const timeout = typeof rawTimeout === 'string' && /^\s*\d+\s*$/.test(rawTimeout) ? Number(rawTimeout) : undefined;
  return {
    ...(key !== undefined && { key }),
    ...(timeout !== undefined && Number.isSafeInteger(timeout) && { deadline: now + timeout }),
  };
}

function validKey(raw: string | string[]): string | undefined {
  try {
    return parseIdempotencyKey(raw);
  } catch {
    return undefined;
  }
}

// Node lower-cases header names, but hand-built maps (message headers) may not.
function header(headers: Record<string, string | string[] | undefined>, name: string) {
  if (headers[name] !== undefined) return headers[name];
  const found = Object.keys(headers).find((candidate) => candidate.toLowerCase() === name);
  return found === undefined ? undefined : headers[found];
}
