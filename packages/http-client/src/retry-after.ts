import { parseHttpDate } from './http-date';

/**
 * Milliseconds a `Retry-After` header asks the client to wait: either
 * delay-seconds (`"1"`) or an HTTP-date in any of its three forms, measured
 * from `now`. Anything else (absent, negative, garbage) is `undefined`: the
 * backoff decides instead.
 *
 * The result is what the server asked for, unbounded (a huge delay-seconds
 * may even be `Infinity`): the client compares it with
 * `backoff.maxRetryAfterMs` and the call's deadline before it sleeps.
 *
 * @example
 * parseRetryAfter('2', Date.now());                              // 2000
 * parseRetryAfter('Wed, 21 Oct 2015 07:28:00 GMT', Date.now());  // 0 (already past)
 */
export function parseRetryAfter(value: string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  // SP and HTAB may surround the value (OWS); a Unicode space or a line break makes it garbage.
  const seconds = /^[ \t]*(\d+)[ \t]*$/.exec(value);
  if (seconds) return Number(seconds[1]) * 1000;
  const at = parseHttpDate(value, now);
  return at === undefined ? undefined : Math.max(0, at - now);
}
