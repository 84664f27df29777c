import { hash } from 'node:crypto';

/**
 * The identity of the record of `(service, operation, scope, key)` in a
 * store: SHA-256 of the four as a JSON array, in hex. A hash, so no user
 * text reaches the store, and a scope or key of any length costs a cache 64
 * characters. The coordinator and the operator API both address records by it.
 */
export function recordKeyOf(service: string, operation: string, scope: string, key: string): string {
  return hash('sha256', JSON.stringify([service, operation, scope, key]), 'hex');
}
