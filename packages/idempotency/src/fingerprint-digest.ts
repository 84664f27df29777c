import { hash } from 'node:crypto';

/**
 * The first 128 bits of SHA-256 of a request's fingerprint, in hex: what a
 * `RedisStore` record keeps of it, and one of the two forms an encrypted
 * answer may be bound to (see `AnswerEncryption`). 128 bits tell the
 * request that claimed a record from another one sent with its key: to be
 * taken for it, a request needs a second preimage of those 128 bits. Never
 * a part of the fingerprint itself: a caller's own fingerprint (any
 * string: `fingerprintOf` in NestJS) may be 64 hex digits that are not a
 * hash, two halves of which only the second tells the amount.
 */
export function fingerprintDigest(fingerprint: string): string {
  return hash('sha256', fingerprint, 'hex').slice(0, 32);
}
