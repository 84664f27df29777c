import { parseRetryAfter } from './retry-after';

describe('parseRetryAfter', () => {
  const now = Date.parse('2025-01-01T00:00:00Z');

  it('reads delay-seconds', () => {
    expect(parseRetryAfter('1', now)).toBe(1000);
    expect(parseRetryAfter(' 0 ', now)).toBe(0);
  });

  it('reads an HTTP-date relative to now, never negative', () => {
    expect(parseRetryAfter('Wed, 01 Jan 2025 00:00:03 GMT', now)).toBe(3000);
    expect(parseRetryAfter('Tue, 31 Dec 2024 23:59:00 GMT', now)).toBe(0);
  });

  it.each([undefined, '', '-1', '1.5', 'soon', '2025-01-01'])('ignores %p', (value) => {
    expect(parseRetryAfter(value, now)).toBeUndefined();
  });
});
