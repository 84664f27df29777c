/**
 * HTTP-date (RFC 9110 §5.6.7), read strictly. Recipients must accept all
 * three forms; only the first is sent today, but a `Retry-After` from an old
 * proxy or a hand-rolled server may carry either of the others:
 *
 * ```text
 * IMF-fixdate   Sun, 06 Nov 1994 08:49:37 GMT    day-name "," SP day SP month SP 4DIGIT SP time SP "GMT"
 * rfc850-date   Sunday, 06-Nov-94 08:49:37 GMT   day-name-l "," SP day "-" month "-" 2DIGIT SP time SP "GMT"
 * asctime-date  Sun Nov  6 08:49:37 1994         day-name SP month SP (2DIGIT / SP DIGIT) SP time SP 4DIGIT
 * ```
 *
 * Not `Date.parse`: it accepts almost anything ("1" is a year) and reads the
 * asctime form, which carries no zone but is GMT, in the local time zone.
 */

const DAY_NAMES = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const LONG_DAY_NAMES = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

// Case-sensitive, single spaces, ASCII digits only: the grammar's %s strings and SP.
// Around the value, the field's OWS (SP and HTAB, nothing else): String#trim would
// also drop Unicode spaces and line breaks, which make the value garbage.
const DAY = `(${DAY_NAMES.join('|')})`;
const MONTH = `(${MONTHS.join('|')})`;
const TIME = '(\\d{2}):(\\d{2}):(\\d{2})';
const OWS = '[ \\t]*';
const IMF_FIXDATE = new RegExp(`^${OWS}${DAY}, (\\d{2}) ${MONTH} (\\d{4}) ${TIME} GMT${OWS}$`);
const RFC850_DATE = new RegExp(`^${OWS}(${LONG_DAY_NAMES.join('|')}), (\\d{2})-${MONTH}-(\\d{2}) ${TIME} GMT${OWS}$`);
const ASCTIME_DATE = new RegExp(`^${OWS}${DAY} ${MONTH} (\\d{2}| \\d) ${TIME} (\\d{4})${OWS}$`);

/** The fields of a date as written, before the calendar checks them. */
interface DateFields {
  weekday: number;
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

/**
 * Epoch ms of a field value holding an HTTP-date in any of its three forms,
 * SP and HTAB around it allowed, or `undefined` for anything else: a wrong form of day name, a day that the month lacks, a
 * time out of range, a weekday that is not the date's own. `now` only
 * places the two-digit year of the RFC 850 form.
 *
 * @example
 * parseHttpDate('Sun, 06 Nov 1994 08:49:37 GMT', Date.now());  // 784111777000
 * parseHttpDate('Sun Nov  6 08:49:37 1994', Date.now());       // 784111777000, whatever the local zone
 */
export function parseHttpDate(value: string, now: number): number | undefined {
  let match = IMF_FIXDATE.exec(value);
  if (match) return toEpoch(fields(match, { weekday: 1, day: 2, month: 3, year: 4, time: 5 }, DAY_NAMES));
  match = ASCTIME_DATE.exec(value);
  if (match) return toEpoch(fields(match, { weekday: 1, month: 2, day: 3, time: 4, year: 7 }, DAY_NAMES));
  match = RFC850_DATE.exec(value);
  if (!match) return undefined;
  const written = fields(match, { weekday: 1, day: 2, month: 3, year: 4, time: 5 }, LONG_DAY_NAMES);
  return toEpoch({ ...written, year: rfc850Year(written, now) });
}

function fields(match: RegExpExecArray, at: Record<'weekday' | 'day' | 'month' | 'year' | 'time', number>, dayNames: string[]): DateFields {
  const group = (index: number) => match[index] ?? '';
  return {
    weekday: dayNames.indexOf(group(at.weekday)),
    year: Number(group(at.year)),
    month: MONTHS.indexOf(group(at.month)),
    day: Number(group(at.day)), // " 6" (asctime) reads as 6
    hour: Number(group(at.time)),
    minute: Number(group(at.time + 1)),
    second: Number(group(at.time + 2)),
  };
}

/**
 * RFC 9110: a two-digit year that appears more than 50 years in the future is
 * the most recent past year with the same last two digits. Any other year is
 * the next one (this year included) that ends in those digits.
 */
function rfc850Year(date: DateFields, now: number): number {
  const thisYear = new Date(now).getUTCFullYear();
  let year = thisYear - (thisYear % 100) + date.year;
  if (year < thisYear) year += 100;
  const fiftyYearsOn = new Date(now);
  fiftyYearsOn.setUTCFullYear(thisYear + 50);
  const at = new Date(0);
  at.setUTCFullYear(year, date.month, date.day); // an impossible day rolls over; it is refused later
  at.setUTCHours(date.hour, date.minute, date.second);
  return at.getTime() > fiftyYearsOn.getTime() ? year - 100 : year;
}

function toEpoch(date: DateFields): number | undefined {
  const { year, month, day, hour, minute, second } = date;
  const leapSecond = hour === 23 && minute === 59 && second === 60; // the grammar allows it; the next second stands in
  if (hour > 23 || minute > 59 || (second > 59 && !leapSecond)) return undefined;
  const at = new Date(0);
  at.setUTCFullYear(year, month, day); // not Date.UTC, which reads years 0-99 as 1900-1999
  if (at.getUTCFullYear() !== year || at.getUTCMonth() !== month || at.getUTCDate() !== day) return undefined;
  if (at.getUTCDay() !== date.weekday) return undefined;
  at.setUTCHours(hour, minute, second);
  return at.getTime();
}
