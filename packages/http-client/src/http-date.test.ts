import { parseHttpDate } from './http-date';

describe('parseHttpDate (RFC 9110 §5.6.7)', () => {
  const now = Date.parse('2025-01-01T00:00:00Z');
  const nov6 = Date.UTC(1994, 10, 6, 8, 49, 37);

  it.each([
    ['IMF-fixdate', 'Sun, 06 Nov 1994 08:49:37 GMT'],
    ['RFC 850', 'Sunday, 06-Nov-94 08:49:37 GMT'],
    ['asctime, one-digit day', 'Sun Nov  6 08:49:37 1994'],
    ['asctime, two-digit day', 'Sun Nov 06 08:49:37 1994'],
  ])('reads the %s form as the same instant', (_, value) => {
    expect(parseHttpDate(value, now)).toBe(nov6);
  });

  it('reads asctime as GMT, whatever the local time zone', () => {
    // vitest.config.mts runs these tests away from UTC, where Date.parse reads asctime as local time.
    expect(new Date(nov6).getTimezoneOffset()).not.toBe(0);
    expect(Date.parse('Sun Nov  6 08:49:37 1994')).not.toBe(nov6);
    expect(parseHttpDate('Sun Nov  6 08:49:37 1994', now)).toBe(nov6);
  });

  it('places an RFC 850 year more than 50 years ahead in the most recent past year with those digits', () => {
    expect(parseHttpDate('Wednesday, 06-Nov-24 00:00:00 GMT', now)).toBe(Date.UTC(2024, 10, 6));
    expect(parseHttpDate('Tuesday, 06-Nov-74 00:00:00 GMT', now)).toBe(Date.UTC(2074, 10, 6)); // 49.8 years ahead
    expect(parseHttpDate('Saturday, 06-Nov-76 00:00:00 GMT', now)).toBe(Date.UTC(1976, 10, 6)); // 2076 is too far
    // Exactly 50 years ahead is not "more than": the boundary instant stays in the future.
    expect(parseHttpDate('Tuesday, 01-Jan-75 00:00:00 GMT', now)).toBe(Date.UTC(2075, 0, 1));
    expect(parseHttpDate('Wednesday, 01-Jan-75 00:00:01 GMT', now)).toBe(Date.UTC(1975, 0, 1, 0, 0, 1));
  });

  it('places a two-digit year from a late-century clock in the next century when that is near', () => {
    const late = Date.parse('2095-06-01T00:00:00Z');
    expect(parseHttpDate('Friday, 01-Jan-00 00:00:00 GMT', late)).toBe(Date.UTC(2100, 0, 1));
    expect(parseHttpDate('Sunday, 01-Jan-90 00:00:00 GMT', late)).toBe(Date.UTC(2090, 0, 1));
  });

  it('allows SP and HTAB around the value (OWS)', () => {
    expect(parseHttpDate(' \tSun, 06 Nov 1994 08:49:37 GMT\t ', now)).toBe(nov6);
    expect(parseHttpDate('\tSun Nov  6 08:49:37 1994 ', now)).toBe(nov6);
  });

  it('accepts the leap second the grammar allows, as the next second', () => {
    expect(parseHttpDate('Sat, 31 Dec 2016 23:59:60 GMT', now)).toBe(Date.UTC(2017, 0, 1));
  });

  it('accepts 29 February in a leap year only', () => {
    expect(parseHttpDate('Thu, 29 Feb 2024 12:00:00 GMT', now)).toBe(Date.UTC(2024, 1, 29, 12));
    expect(parseHttpDate('Sat, 29 Feb 2025 12:00:00 GMT', now)).toBeUndefined();
  });

  it.each([
    ['a number', '1'],
    ['a word', 'soon'],
    ['nothing', ''],
    ['an ISO date', '1994-11-06T08:49:37Z'],
    ['a long day name in IMF-fixdate', 'Sunday, 06 Nov 1994 08:49:37 GMT'],
    ['a short day name in RFC 850', 'Sun, 06-Nov-94 08:49:37 GMT'],
    ['a long day name in asctime', 'Sunday Nov  6 08:49:37 1994'],
    ['the wrong weekday for the date', 'Mon, 06 Nov 1994 08:49:37 GMT'],
    ['a lower-case day name', 'sun, 06 Nov 1994 08:49:37 GMT'],
    ['a lower-case month', 'Sun, 06 nov 1994 08:49:37 GMT'],
    ['a one-digit day in IMF-fixdate', 'Sun, 6 Nov 1994 08:49:37 GMT'],
    ['a two-digit year in IMF-fixdate', 'Sun, 06 Nov 94 08:49:37 GMT'],
    ['a four-digit year in RFC 850', 'Sunday, 06-Nov-1994 08:49:37 GMT'],
    ['another zone', 'Sun, 06 Nov 1994 08:49:37 UTC'],
    ['a numeric offset', 'Sun, 06 Nov 1994 08:49:37 +0000'],
    ['asctime with one space before a one-digit day', 'Sun Nov 6 08:49:37 1994'],
    ['asctime with a zone', 'Sun Nov  6 08:49:37 1994 GMT'],
    ['a no-break space around it', '\u00a0Sun, 06 Nov 1994 08:49:37 GMT'],
    ['a line break after it', 'Sun, 06 Nov 1994 08:49:37 GMT\n'],
    ['doubled spaces', 'Sun,  06 Nov 1994 08:49:37 GMT'],
    ['non-ASCII digits', 'Sun, \u0660\u0666 Nov 1994 08:49:37 GMT'],
    ['day 00', 'Sun, 00 Nov 1994 08:49:37 GMT'],
    ['day 32', 'Sun, 32 Nov 1994 08:49:37 GMT'],
    ['31 April', 'Thu, 31 Apr 2025 08:49:37 GMT'],
    ['hour 24', 'Sun, 06 Nov 1994 24:00:00 GMT'],
    ['minute 60', 'Sun, 06 Nov 1994 08:60:00 GMT'],
    ['second 60 outside 23:59', 'Sun, 06 Nov 1994 08:49:60 GMT'],
    ['second 61', 'Sat, 31 Dec 2016 23:59:61 GMT'],
  ])('refuses %s', (_, value) => {
    expect(parseHttpDate(value, now)).toBeUndefined();
  });
});
