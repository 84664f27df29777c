import { isFinalOutcome, statusOutcome } from './outcome';

describe('isFinalOutcome', () => {
  it.each([200, 201, 202, 204, 299, 301, 302, 304, 399])('stores a %i (success or redirect)', (statusCode) => {
    expect(isFinalOutcome({ statusCode })).toBe(true);
  });

  it.each([401, 402, 403, 404, 410, 412, 422, 451, 499])('stores a definitive client error %i', (statusCode) => {
    expect(isFinalOutcome({ statusCode })).toBe(true);
  });

  it.each([400, 408, 409, 425, 429])('releases a %i: the same request may succeed later', (statusCode) => {
    expect(isFinalOutcome({ statusCode })).toBe(false);
  });

  it.each([500, 502, 503, 504, 599])('releases a server error %i', (statusCode) => {
    expect(isFinalOutcome({ statusCode })).toBe(false);
  });

  it.each([
    ['an object without statusCode', { chargeId: 'ch_1' }],
    ['a string', 'ok'],
    ['a number', 42],
    ['null', null],
    ['undefined', undefined],
    ['a non-numeric statusCode', { statusCode: '503' }],
  ])('stores a plain value: %s', (_, value) => {
    expect(isFinalOutcome(value)).toBe(true);
  });
});

describe('statusOutcome', () => {
  it.each([
    [200, true, false],
    [302, true, false],
    [400, false, false],
    [402, true, false],
    [404, true, false],
    [408, false, true],
    [409, false, true],
    [422, true, false],
    [425, false, true],
    [429, false, true],
    [500, false, false],
    [501, false, false],
    [502, false, true],
    [503, false, true],
    [504, false, true],
  ])('%i: stored %s, retried %s', (status, final, retryable) => {
    expect(statusOutcome(status)).toEqual({ final, retryable });
  });

  it('never asks a client to retry what is stored: a retry of a stored answer is only a replay', () => {
    for (let status = 100; status < 600; status++) {
      const { final, retryable } = statusOutcome(status);
      expect(final && retryable).toBe(false);
    }
  });
});
