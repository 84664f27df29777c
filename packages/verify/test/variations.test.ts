import { variations } from '../src/scenarios/variations';

describe('the bodies a reused key is pressed with', () => {
  const request = {
    url: 'http://127.0.0.1:1/charges?currency=EUR&page=2',
    body: { orderId: '{{intentId}}', amount: 1200, capture: true, customer: { ref: 'c-1' }, note: 'gift', tags: ['a'], none: null },
    ignoredFields: ['note'],
    ignoredQuery: ['page'],
  };

  it('changes one scalar field or query parameter at a time, each to a value the chain would accept as readily', () => {
    const found = variations(request, 'vfy-other');
    expect(found.map((v) => v.field)).toEqual(['orderId', 'amount', 'capture', 'customer.ref', 'tags.0', '?currency']);
    const body = (field: string) => found.find((v) => v.field === field)?.body;
    expect(body('orderId')).toEqual({ ...request.body, orderId: 'vfy-other' });
    expect(body('amount')).toEqual({ ...request.body, amount: 1201 });
    expect(body('capture')).toEqual({ ...request.body, capture: false });
    expect(body('customer.ref')).toEqual({ ...request.body, customer: { ref: 'c-1-changed' } });
    expect(body('tags.0')).toEqual({ ...request.body, tags: ['a-changed'] });
    expect(found.find((v) => v.field === '?currency')).toEqual({
      field: '?currency',
      body: request.body,
      url: 'http://127.0.0.1:1/charges?currency=EUR-changed&page=2',
    });
  });

  it('changes a whole string body as one field, and finds nothing to change without a body or a query', () => {
    expect(variations({ ...request, url: 'http://127.0.0.1:1/c', body: 'order={{intentId}}' }, 'vfy-other')).toEqual([
      { field: 'body', body: 'order=vfy-other', url: 'http://127.0.0.1:1/c' },
    ]);
    expect(variations({ ...request, url: 'http://127.0.0.1:1/c', body: undefined }, 'vfy-other')).toEqual([]);
  });
});
