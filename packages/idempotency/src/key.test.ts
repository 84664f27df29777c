import { isInvalidKeyError } from './errors';
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
  ])('refuses %s with InvalidKeyError', (_, header) => {
    expect(isInvalidKeyError(refusal(header))).toBe(true);
  });

  it('refuses a header sent twice (an array of two values) and an empty array', () => {
    expect(isInvalidKeyError(refusal(['"a"', '"b"']))).toBe(true);
    expect(isInvalidKeyError(refusal([]))).toBe(true);
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
