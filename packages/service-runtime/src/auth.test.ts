import { presentedToken, principalOf, serviceToken, TOKEN_LENGTH } from './auth';
import { ConfigError } from './config-error';

const token = (length: number, char = 'k') => char.repeat(length);

describe('serviceToken', () => {
  it('is the token as configured, or a ConfigError naming the variable without its value', () => {
    expect(serviceToken('ORDERS_TOKEN', token(TOKEN_LENGTH.min))).toBe(token(TOKEN_LENGTH.min));
    expect(serviceToken('ORDERS_TOKEN', token(TOKEN_LENGTH.max))).toBe(token(TOKEN_LENGTH.max));
    expect(() => serviceToken('ORDERS_TOKEN', token(TOKEN_LENGTH.max + 1))).toThrow(/^ORDERS_TOKEN is not valid/);
    expect(() => serviceToken('ORDERS_TOKEN', `${token(10)} ${token(10)}`)).toThrow(/^ORDERS_TOKEN is not valid/);
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
