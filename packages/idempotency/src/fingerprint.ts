import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';

/** What a request's fingerprint is computed from. */
export interface FingerprintInput {
  /** HTTP method, or the message pattern for a microservice handler. */
  method: string;
  /** The route template (`/charges`), never the raw URL with its query. */
  route: string;
  /** The parsed body, or just the fields an operation names. */
  body: unknown;
}

/**
 * SHA-256 (hex) over the RFC 8785 canonical JSON of method, route and body.
 *
 * Canonical JSON makes the fingerprint independent of key order and number
 * spelling, so the same payload always hashes alike. It serves twice: it
 * detects a key reused with another payload (422), and it *is* the key under
 * the fingerprint fallback, when a request carries none.
 *
 * @example
 * requestFingerprint({ method: 'POST', route: '/charges', body: { amountCents: 500 } });
 */
export function requestFingerprint(input: FingerprintInput): string {
  const canonical = canonicalize({
    method: input.method.toUpperCase(),
    route: input.route,
    body: input.body === undefined ? null : input.body,
  });
  return createHash('sha256').update(canonical ?? 'null').digest('hex');
}

/** Keep only the named top-level fields of a body (for `fingerprintFields`). */
export function pickFields(body: unknown, fields: readonly string[]): Record<string, unknown> {
  const source = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
  return Object.fromEntries(fields.map((field) => [field, source[field] ?? null]));
}

/** Short, non-reversible form of a key for logs, metrics and diagrams. */
export function hashKey(key: string): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 12);
}
