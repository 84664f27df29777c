import { statusOutcome } from '@idempotency-chain/idempotency';
import { AttemptTimedOut } from './attempt';
import { classifyAttempt } from './retry-classification';

describe('classifyAttempt', () => {
  it.each([200, 201, 204, 304])('answers %i as ok, not retried', (status) => {
    expect(classifyAttempt({ status })).toEqual({ outcome: 'ok', retryable: false });
  });

  it.each([502, 503, 504])('retries %i: the outcome is unknown', (status) => {
    expect(classifyAttempt({ status })).toEqual({ outcome: 'http-error', retryable: true });
  });

  it.each([408, 425, 429])('retries %i: the server says "not now", and released the key', (status) => {
    expect(classifyAttempt({ status })).toEqual({ outcome: 'http-error', retryable: true });
  });

  it.each([400, 401, 403, 404, 422, 500, 501])('never retries %i: it is an answer', (status) => {
    expect(classifyAttempt({ status })).toEqual({ outcome: 'http-error', retryable: false });
  });

  it.each([
    ['in-flight problem type', {}, { type: 'urn:idempotency-chain:problem:in-flight', status: 409 }],
    ['lease-lost problem type', {}, { type: 'urn:idempotency-chain:problem:lease-lost', status: 409 }],
    ['Retry-After', { 'retry-after': '1' }, undefined],
  ])('retries a 409 that says "in flight" by its %s', (_by, headers, body) => {
    expect(classifyAttempt({ status: 409, headers, body })).toEqual({ outcome: 'http-error', retryable: true });
  });

  it.each([
    ['no body', undefined],
    ['a text body', 'conflict'],
    ['another problem type', { type: 'https://example.com/problems/version-conflict', status: 409 }],
  ])('never retries a genuine 409 Conflict (%s): it is an answer', (_with, body) => {
    expect(classifyAttempt({ status: 409, headers: { 'content-type': 'application/json' }, body })).toEqual({
      outcome: 'http-error',
      retryable: false,
    });
  });

  it('retries exactly the statuses the server side does not store as final and calls retryable (409: when in flight)', () => {
    expect(classifyAttempt({ status: 409, headers: { 'retry-after': '1' } })!.retryable).toBe(statusOutcome(409).retryable);
    for (let status = 100; status < 600; status += 1) {
      if (status === 409) continue;
      expect({ status, retryable: classifyAttempt({ status })!.retryable }).toEqual({ status, retryable: statusOutcome(status).retryable });
    }
  });

  it('retries our own per-attempt timeout, but not the deadline cutting an attempt short', () => {
    expect(classifyAttempt({ error: new AttemptTimedOut(2000, false) })).toEqual({ outcome: 'timeout', retryable: true });
    expect(classifyAttempt({ error: new AttemptTimedOut(150, true) })).toEqual({ outcome: 'deadline', retryable: false });
  });

  it.each([
    ['ECONNRESET', 'reset'],
    ['EPIPE', 'reset'],
    ['UND_ERR_SOCKET', 'reset'],
    ['ECONNREFUSED', 'refused'],
    ['UND_ERR_HEADERS_TIMEOUT', 'timeout'],
    ['UND_ERR_BODY_TIMEOUT', 'timeout'],
    ['UND_ERR_CONNECT_TIMEOUT', 'timeout'],
  ])('retries transport error %s as %s', (code, outcome) => {
    expect(classifyAttempt({ error: Object.assign(new Error('x'), { code }) })).toEqual({ outcome, retryable: true });
  });

  it('finds the code in a cause or an AggregateError (happy eyeballs)', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    expect(classifyAttempt({ error: new Error('fetch failed', { cause: refused }) })?.outcome).toBe('refused');
    expect(classifyAttempt({ error: new AggregateError([refused]) })?.outcome).toBe('refused');
  });

  it('leaves anything else to be thrown as is (a bug is not an outcome)', () => {
    expect(classifyAttempt({ error: new TypeError('bad header') })).toBeUndefined();
    expect(classifyAttempt({ error: Object.assign(new Error('closed'), { code: 'UND_ERR_CLOSED' }) })).toBeUndefined();
    expect(classifyAttempt({ error: 'string' })).toBeUndefined();
  });
});
