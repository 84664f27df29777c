import { HeaderName, hashKey, parseIdempotencyKey } from '@idempotency-chain/idempotency';
import { IdempotencyAttribute } from '@idempotency-chain/idempotency/opentelemetry';

/**
 * What `@opentelemetry/instrumentation-undici` hands its hooks: undici's request, headers as sent.
 *
 * @public
 */
export interface UndiciRequestHeaders {
  /** `[name, value, ...]` from undici 6 on; `name: value\r\n` lines before. */
  headers: string | ReadonlyArray<string | string[]>;
}

/** The semantic conventions' attribute for an HTTP client span that is a resend (`attempt - 1`). */
const RESEND_COUNT = 'http.request.resend_count';

/**
 * The attributes of one attempt's client span, read from the headers this
 * client sent: the 1-based attempt, `http.request.resend_count` on a resend,
 * and the hash of the key (the same on every attempt of one call, and the
 * one the next hop's spans carry for the request). For the undici
 * instrumentation, which makes one
 * client span per attempt and injects `traceparent` next to the key:
 *
 * @example
 * new UndiciInstrumentation({ startSpanHook: attemptSpanAttributes });
 *
 * @public
 */
export function attemptSpanAttributes(request: UndiciRequestHeaders): Record<string, string | number> {
  const attributes: Record<string, string | number> = {};
  const attempt = Number(header(request.headers, HeaderName.RequestAttempt));
  if (Number.isInteger(attempt) && attempt >= 1) {
    attributes[IdempotencyAttribute.Attempt] = attempt;
    if (attempt > 1) attributes[RESEND_COUNT] = attempt - 1;
  }
  const key = header(request.headers, HeaderName.IdempotencyKey);
  if (key !== undefined) {
    try {
      attributes[IdempotencyAttribute.KeyHash] = hashKey(parseIdempotencyKey(key));
    } catch {
      // Not a key this client sent (malformed): no hash rather than a hash of garbage.
    }
  }
  return attributes;
}

/** The first value of header `name` (lower case), in either of undici's shapes. */
function header(headers: UndiciRequestHeaders['headers'], name: string): string | undefined {
  if (typeof headers === 'string') {
    for (const line of headers.split('\r\n')) {
      const colon = line.indexOf(':');
      if (colon > 0 && line.slice(0, colon).trim().toLowerCase() === name) return line.slice(colon + 1).trim();
    }
    return undefined;
  }
  for (let i = 0; i + 1 < headers.length; i += 2) {
    if (String(headers[i]).toLowerCase() !== name) continue;
    const value = headers[i + 1];
    return Array.isArray(value) ? value[0] : value;
  }
  return undefined;
}
