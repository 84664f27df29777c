/**
 * Milliseconds a `Retry-After` header asks the client to wait: either
 * delay-seconds (`"1"`) or an HTTP-date, measured from `now`. Anything else
 * (absent, negative, garbage) is `undefined`: the backoff decides instead.
 *
 * @example
 * parseRetryAfter('2', Date.now());                              // 2000
 * parseRetryAfter('Wed, 21 Oct 2015 07:28:00 GMT', Date.now());  // 0 (already past)
 */
export function parseRetryAfter(value: string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  // Only an IMF-fixdate-like value, so Date.parse's leniency ("1", "soon") never turns garbage into a time.
  if (!/^[A-Za-z]{3}, \d{2} [A-Za-z]{3} \d{4} \d{2}:\d{2}:\d{2} GMT$/.test(trimmed)) return undefined;
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
