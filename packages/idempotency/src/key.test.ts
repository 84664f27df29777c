import { InvalidKeyError, isIdempotencyError } from './errors';
import { formatIdempotencyKey, MAX_KEY_LENGTH, parseIdempotencyKey } from './key';

function refusal(header: string | string[]): unknown {
  try {
    parseIdempotencyKey(header);
  } catch (error) {
    return error;
  }
  return undefined;
}

describe('parseIdempotencyKey', () => {
  it('reads a Structured Field String and a bare token as the same key', () => {
    expect(parseIdempotencyKey('"abc"')).toBe('abc');
    expect(parseIdempotencyKey('abc')).toBe('abc');
    expect(parseIdempotencyKey(['"8e03978e-40d5"'])).toBe(parseIdempotencyKey('8e03978e-40d5'));
  });

  it('unescapes \\" and \\\\ inside a Structured Field String', () => {
    expect(parseIdempotencyKey('"a\\"b"')).toBe('a"b');
    expect(parseIdempotencyKey('"a\\\\b"')).toBe('a\\b');
  });

  it('ignores whitespace around the header value, keeps spaces inside a string', () => {
    expect(parseIdempotencyKey('  abc\t')).toBe('abc');
    expect(parseIdempotencyKey(' "a b" ')).toBe('a b');
    expect(parseIdempotencyKey('\t \t"abc"\t \t')).toBe('abc');
  });

  it(`accepts ${MAX_KEY_LENGTH} characters, bare or quoted`, () => {
    const key = 'k'.repeat(MAX_KEY_LENGTH);
    expect(parseIdempotencyKey(key)).toBe(key);
    expect(parseIdempotencyKey(`"${key}"`)).toBe(key);
  });

  it.each([
    ['empty', ''],
    ['an empty string', '""'],
    ['whitespace only', '   '],
    [`${MAX_KEY_LENGTH + 1} characters`, 'k'.repeat(MAX_KEY_LENGTH + 1)],
    [`${MAX_KEY_LENGTH + 1} characters, quoted`, `"${'k'.repeat(MAX_KEY_LENGTH + 1)}"`],
    ['non-ASCII (é)', 'caf\u00e9'],
    ['non-ASCII (é), quoted', '"caf\u00e9"'],
    ['an emoji', 'key-\u{1F600}'],
    ['an emoji, quoted', '"key-\u{1F600}"'],
    ['a control character', 'a\u0001b'],
    ['a control character, quoted', '"a\u0001b"'],
    ['a tab inside a string', '"a\tb"'],
    ['a space inside a bare token', 'a b'],
    ['an unterminated string', '"abc'],
    ['a string with parameters', '"a";x=1'],
    ['a list of two strings in one header', '"a", "b"'],
    // Only SP and HTAB are whitespace around a header value (RFC 9110 OWS).
    ['a leading no-break space', '\u00a0abc'],
    ['a trailing no-break space', 'abc\u00a0'],
    ['an ideographic space', '\u3000abc'],
    ['an em space', 'abc\u2003'],
    ['a byte order mark', '\ufeffabc'],
    ['a leading line feed', '\nabc'],
    ['a trailing carriage return', 'abc\r'],
    ['a vertical tab', '\vabc'],
    ['a form feed', 'abc\f'],
    ['a no-break space before a string', '\u00a0"abc"'],
    ['a no-break space after a string', '"abc"\u00a0'],
    ['a line feed after a string', '"abc"\n'],
  ])('refuses %s with InvalidKeyError', (_, header) => {
    expect(isIdempotencyError(refusal(header), InvalidKeyError)).toBe(true);
  });

  it('refuses a header sent twice (an array of two values) and an empty array', () => {
    expect(isIdempotencyError(refusal(['"a"', '"b"']), InvalidKeyError)).toBe(true);
    expect(isIdempotencyError(refusal([]), InvalidKeyError)).toBe(true);
  });

  it('gives the refusal the 400 problem type', () => {
    expect(refusal('')).toMatchObject({ httpStatus: 400, problemType: 'urn:idempotency-chain:problem:invalid-key' });
  });
});

describe('formatIdempotencyKey', () => {
  it.each([
    ['plain', 'abc-123'],
    ['with quotes', 'say "hi"'],
    ['with backslashes', 'C:\\keys\\1'],
    ['with spaces, leading and trailing', '  padded key  '],
    ['every printable ASCII character', Array.from({ length: 95 }, (_, i) => String.fromCharCode(0x20 + i)).join('')],
    ['the longest key', 'x'.repeat(MAX_KEY_LENGTH)],
  ])('round-trips a key %s through parseIdempotencyKey', (_, key) => {
    const header = formatIdempotencyKey(key);
    expect(header.startsWith('"') && header.endsWith('"')).toBe(true);
    expect(parseIdempotencyKey(header)).toBe(key);
  });
});

describe('a repeated Idempotency-Key header', () => {
  it('is named as such: Node joins repeated headers with ", "', () => {
    expect(() => parseIdempotencyKey('k-1, k-2')).toThrow('Idempotency-Key must be sent exactly once');
  });
});
