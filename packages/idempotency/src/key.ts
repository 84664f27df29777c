import { parseItem, serializeBareItem } from 'structured-headers';
import { InvalidKeyError } from './errors';

/** Longest key accepted, in characters. */
export const MAX_KEY_LENGTH = 255;

const VISIBLE_ASCII = /^[\x21-\x7e]+$/;
const PRINTABLE_ASCII = /^[\x20-\x7e]+$/;

/**
 * Parse an `Idempotency-Key` header value into the key it carries.
 *
 * Accepts the IETF draft's Structured Field String (`"abc"`, with `\"` and
 * `\\` escapes) and, for the clients that predate it, a bare token (`abc`).
 * A valid key is 1 to 255 printable ASCII characters. Every hop calls this
 * same function, so a key accepted at the edge is never refused downstream.
 *
 * @throws InvalidKeyError for anything else; the request is refused before
 *   any record is claimed.
 * @example
 * parseIdempotencyKey('"8e03978e-40d5"'); // '8e03978e-40d5'
 * parseIdempotencyKey('8e03978e-40d5');   // '8e03978e-40d5'
 *
 * @public
 */
export function parseIdempotencyKey(header: string | string[]): string {
  if (Array.isArray(header)) {
    if (header.length !== 1) throw new InvalidKeyError('Idempotency-Key must be sent exactly once');
    return parseIdempotencyKey(header[0] as string);
  }
  const value = trimOws(header);
  const key = value.startsWith('"') ? parseString(value) : value;
  if (key.length === 0) throw new InvalidKeyError('Idempotency-Key is empty');
  // Node joins a repeated header with ", ": name that, rather than the characters it left behind.
  if (!value.startsWith('"') && key.includes(',')) throw new InvalidKeyError('Idempotency-Key must be sent exactly once');
  if (key.length > MAX_KEY_LENGTH) {
    throw new InvalidKeyError(`Idempotency-Key is longer than ${MAX_KEY_LENGTH} characters`);
  }
  const allowed = value.startsWith('"') ? PRINTABLE_ASCII : VISIBLE_ASCII;
  if (!allowed.test(key)) throw new InvalidKeyError('Idempotency-Key must be printable ASCII');
  return key;
}

/**
 * Render a key as the header value sent downstream: a Structured Field String,
 * which every hop (and every draft-conforming server) parses back to `key`.
 *
 * @public
 */
export function formatIdempotencyKey(key: string): string {
  return serializeBareItem(key);
}

// RFC 9110 OWS is SP and HTAB only. String#trim would also strip U+00A0,
// U+3000, a BOM or a line break, turning "\u00a0abc" into the valid key "abc".
function trimOws(value: string): string {
  let start = 0;
  let end = value.length;
  while (start < end && (value[start] === ' ' || value[start] === '\t')) start++;
  while (end > start && (value[end - 1] === ' ' || value[end - 1] === '\t')) end--;
  return value.slice(start, end);
}

function parseString(value: string): string {
  let item: ReturnType<typeof parseItem>;
  try {
    item = parseItem(value);
  } catch (cause) {
    throw new InvalidKeyError('Idempotency-Key is not a valid Structured Field String', { cause });
  }
  const [bare, params] = item;
  if (typeof bare !== 'string' || params.size > 0) {
    throw new InvalidKeyError('Idempotency-Key must be a plain Structured Field String');
  }
  return bare;
}
