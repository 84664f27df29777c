import { parseRetryAfter } from './retry-after';

describe('parseRetryAfter', () => {
  const now = Date.parse('2025-01-01T00:00:00Z');

  it('reads delay-seconds', () => {
    expect(parseRetryAfter('1', now)).toBe(1000);
    expect(parseRetryAfter(' 0 ', now)).toBe(0);
    expect(parseRetryAfter('\t3\t', now)).toBe(3000);
  });

  it('reads an HTTP-date relative to now, never negative', () => {
    expect(parseRetryAfter('Wed, 01 Jan 2025 00:00:03 GMT', now)).toBe(3000);
    expect(parseRetryAfter('Tue, 31 Dec 2024 23:59:00 GMT', now)).toBe(0);
  });

  it.each([
    ['IMF-fixdate', 'Wed, 01 Jan 2025 00:00:05 GMT'],
    ['RFC 850', 'Wednesday, 01-Jan-25 00:00:05 GMT'],
    ['asctime', 'Wed Jan  1 00:00:05 2025'],
  ])('reads the %s form of HTTP-date', (_, value) => {
    expect(parseRetryAfter(value, now)).toBe(5000);
  });

  it('returns what the server asked for, unbounded: the client decides what it will wait', () => {
    expect(parseRetryAfter('3600', now)).toBe(3_600_000);
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:00 GMT', now)).toBe(365 * 24 * 3_600_000);
  });

  it.each([undefined, '', '-1', '1.5', 'soon', '2025-01-01', 'Wednesday, 01 Jan 2025 00:00:05 GMT', '\u00a05', '5\u3000', '\n5'])(
    'ignores %o',
    (value) => {
      expect(parseRetryAfter(value, now)).toBeUndefined();
    },
  );
});
