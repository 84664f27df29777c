import { parseCredentials, presentedToken, principalOf, serviceToken, TOKEN_LENGTH } from './auth';
import { ConfigError } from './config-error';

const token = (length: number, char = 'k') => char.repeat(length);

describe('parseCredentials', () => {
  it('reads a JSON object of token to principal', () => {
    expect(parseCredentials('KEYS', JSON.stringify({ [token(16)]: 'acct-7', [token(20, 'z')]: 'svc:orders' }))).toEqual(
      new Map([
        [token(16), 'acct-7'],
        [token(20, 'z'), 'svc:orders'],
      ]),
    );
  });

  it.each([
    ['unset', undefined, /^KEYS is not set: expected a JSON object/],
    ['not JSON', `${token(20)}=acct-7`, /^KEYS is not valid: expected a JSON object/],
    ['an array', JSON.stringify([token(20)]), /^KEYS is not valid: expected a JSON object/],
    ['empty', '{}', /^KEYS is not valid: expected a JSON object/],
    [
      `a token under ${TOKEN_LENGTH.min} characters`,
      JSON.stringify({ [token(TOKEN_LENGTH.min - 1)]: 'a' }),
      /^KEYS is not valid: expected tokens of 16 to 256/,
    ],
    [
      `a token over ${TOKEN_LENGTH.max} characters`,
      JSON.stringify({ [token(TOKEN_LENGTH.max + 1)]: 'a' }),
      /^KEYS is not valid: expected tokens/,
    ],
    ['a token with a space', JSON.stringify({ [`${token(10)} ${token(10)}`]: 'a' }), /^KEYS is not valid: expected tokens/],
    ['a principal that is not a name', JSON.stringify({ [token(20)]: 'a b' }), /^KEYS is not valid: a principal must be/],
    ['a principal that is not a string', JSON.stringify({ [token(20)]: 7 }), /^KEYS is not valid: a principal must be/],
  ])('refuses %s with one line naming the variable, never the token', (_case, raw, message) => {
    const error = (() => {
      try {
        parseCredentials('KEYS', raw);
      } catch (thrown) {
        return thrown as Error;
      }
      throw new Error('accepted');
    })();
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.message).toMatch(message);
    expect(error.message).not.toContain('k'.repeat(8));
    expect(error.message).not.toContain('\n');
  });

  it('accepts tokens of exactly the shortest and longest lengths', () => {
    expect(parseCredentials('KEYS', JSON.stringify({ [token(TOKEN_LENGTH.min)]: 'a', [token(TOKEN_LENGTH.max, 'z')]: 'b' })).size).toBe(2);
  });
});

describe('serviceToken', () => {
  it('is the token as configured, or a ConfigError naming the variable without its value', () => {
    expect(serviceToken('ORDERS_TOKEN', token(16))).toBe(token(16));
    expect(() => serviceToken('ORDERS_TOKEN', undefined)).toThrow(/^ORDERS_TOKEN is not set/);
    expect(() => serviceToken('ORDERS_TOKEN', token(15))).toThrow(
      new ConfigError(`ORDERS_TOKEN is not valid: expected tokens of 16 to 256 printable characters, no spaces`),
    );
  });
});

describe('presentedToken', () => {
  it.each([
    [{ authorization: 'Bearer abc' }, 'abc'],
    [{ authorization: 'bearer   abc' }, 'abc'],
    [{ 'x-api-key': 'abc' }, 'abc'],
    // An Authorization header decides alone: a request does not present two credentials.
    [{ authorization: 'Basic abc', 'x-api-key': 'abc' }, undefined],
    [{ authorization: 'Bearer a b' }, undefined],
    [{ authorization: 'Bearer' }, undefined],
    [{ 'x-api-key': '' }, undefined],
    [{ 'x-api-key': ['a', 'b'] }, undefined],
    [{}, undefined],
  ])('reads %j as %p', (headers, expected) => {
    expect(presentedToken(headers)).toBe(expected);
  });
});

describe('principalOf', () => {
  const credentials = new Map([
    [token(16), 'acct-a'],
    [token(16, 'z'), 'acct-b'],
  ]);

  it('names the principal of a configured token, and nobody for any other', () => {
    expect(principalOf(credentials, token(16))).toBe('acct-a');
    expect(principalOf(credentials, token(16, 'z'))).toBe('acct-b');
    expect(principalOf(credentials, token(15))).toBeUndefined();
    expect(principalOf(credentials, token(17))).toBeUndefined();
    expect(principalOf(credentials, token(100_000))).toBeUndefined();
    expect(principalOf(credentials, undefined)).toBeUndefined();
  });
});
