import { requestDeadline, requestTarget } from './http-request';

describe('reading a request', () => {
  it('reads the concrete path and the query as sent, never the route template', () => {
    const base = { method: 'POST', headers: {} };

    expect(requestTarget({ ...base, url: '/orders/42/refund?debug=1&a=2' })).toEqual({ path: '/orders/42/refund', query: 'debug=1&a=2' });
    expect(requestTarget({ ...base, url: '/orders/42' })).toEqual({ path: '/orders/42', query: '' });
    // Express: a router mounted at /v1 strips it from `url`; `originalUrl` keeps it.
    expect(requestTarget({ ...base, url: '/orders/42?x', originalUrl: '/v1/orders/42?x' })).toEqual({ path: '/v1/orders/42', query: 'x' });
  });

  it('turns request-timeout-ms into an absolute deadline and ignores garbage', () => {
    const at = (value?: string) => requestDeadline({ method: 'POST', headers: { 'request-timeout-ms': value } }, 1_000);

    expect(at('250')).toBe(1_250);
    expect(at('0')).toBe(1_000);
    for (const garbage of [undefined, '', 'abc', '-5', '1e3', '2.5', '99999999999']) expect(at(garbage)).toBeUndefined();
  });
});
