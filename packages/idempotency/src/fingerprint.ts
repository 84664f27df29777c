import { hash } from 'node:crypto';
import { canonicalJson, iterableMap, MAX_CANONICAL_DEPTH, TooDeepError } from './canonical-json';
import { InvalidRequestError } from './errors';

/**
 * What a request's fingerprint is computed from: the request itself.
 *
 * @public
 */
export interface FingerprintInput {
  /** HTTP method, or `RPC` for a message handler. */
  method: string;
  /**
   * The concrete path, its parameters filled in (`/orders/7/refund`), not
   * the route template: one key sent to another resource is another request.
   * For a message handler, its pattern.
   */
  path: string;
  /** The raw query string, without `?` (`b=2&a=1`); its order does not matter. */
  query?: string;
  /**
   * The parsed body (or just the fields an operation names), or its bytes.
   * Beside JSON values it may hold what a custom scalar or a message codec
   * produces - a `bigint`, a `Map`, a `Set` - each fingerprinted by its
   * value (a Map's and a Set's order aside), never as a JSON value's.
   */
  body: unknown;
  /** Uploaded files, when a multipart parser took them out of the body: each is part of the request. */
  files?: ReadonlyArray<{ field: string; name: string; type: string; size: number; bytes?: Uint8Array }>;
}

/**
 * SHA-256 (hex) over the RFC 8785 canonical JSON of method, concrete path,
 * canonical query and body.
 *
 * Canonical JSON makes the fingerprint independent of member order and
 * number spelling, and the query's parameters are sorted, so the same
 * request always hashes alike. It serves twice: it detects a key reused for
 * another request (422), and it *is* the key under the fingerprint
 * fallback, when a request carries none.
 *
 * A `bigint`, a `Map` or a `Set` in the body (a GraphQL custom scalar's
 * argument, a message codec's value) is written in a form no JSON value
 * has: `500n` is neither `500` nor `"500n"`, and a Map is written with its
 * entries, sorted, and its own enumerable properties (a subclass's field),
 * so two Maps differ as their entries or fields do, whatever their order. What JSON already holds hashes as it always has.
 *
 * @throws InvalidRequestError (400) for a body nested too deep to canonicalise (a Map or a Set is a level).
 * @throws TypeError for a body holding what has no canonical form (a non-finite number, a function or a symbol in a list, a Proxy of a Map or a Set).
 * @example
 * requestFingerprint({ method: 'POST', path: '/orders/7/refund', query: 'notify=1', body: { amountCents: 500 } });
 *
 * @public
 */
export function requestFingerprint(input: FingerprintInput): string {
  const { body } = input;
  const request: Record<string, unknown> = {
    method: input.method.toUpperCase(),
    path: input.path,
    query: canonicalQuery(input.query ?? ''),
  };
  if (body instanceof Uint8Array) request.bytes = Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('base64');
  else request.body = body === undefined ? null : body;
  if (input.files?.length) {
    request.files = input.files.map(({ bytes, ...file }) => (bytes ? { ...file, sha256: hash('sha256', bytes, 'hex') } : file));
  }
  let canonical: string;
  try {
    canonical = canonicalJson(request, MAX_CANONICAL_DEPTH + 1); // the body keeps every level
  } catch (cause) {
    if (cause instanceof TooDeepError) throw new InvalidRequestError(`The request body is ${cause.message}`, { cause });
    throw cause;
  }
  return hash('sha256', canonical, 'hex');
}

/**
 * The query's parameters, decoded and sorted by name: `?b=2&a=1` and
 * `?a=1&b=2` are one request. Values of a repeated name keep their order
 * (`?to=A&to=B` is the list [A, B], not [B, A]).
 */
function canonicalQuery(query: string): Array<[string, string]> {
  if (query === '') return [];
  const params = new URLSearchParams(query);
  params.sort(); // stable: by name only
  return [...params];
}

/**
 * Keep only the named top-level fields of a body (for `fingerprintFields`).
 * A body that is a Map (a message codec's) has its entries read by name,
 * as an object's members are: its own properties are not its fields, and
 * reading them picked `null` for every field of every such message.
 */
export function pickFields(body: unknown, fields: readonly string[]): Record<string, unknown> {
  if (body instanceof Map) {
    const map = iterableMap(body);
    return Object.fromEntries(fields.map((field) => [field, map.get(field) ?? null]));
  }
  const source = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
  return Object.fromEntries(fields.map((field) => [field, source[field] ?? null]));
}
