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

  it('varies a form or JSON text body field by field, sent back as text, templates kept', () => {
    const bare = { ...request, url: 'http://127.0.0.1:1/c' };
    expect(variations({ ...bare, body: 'orderId={{intentId}}&amount=100&currency=EUR' }, 'vfy-other')).toEqual([
      { field: 'orderId', body: 'orderId=vfy-other&amount=100&currency=EUR', url: bare.url },
      { field: 'amount', body: 'orderId={{intentId}}&amount=101&currency=EUR', url: bare.url },
      { field: 'currency', body: 'orderId={{intentId}}&amount=100&currency=EUR-changed', url: bare.url },
    ]);
    const json = variations({ ...bare, body: '{"orderId":"{{intentId}}","amount":100}' }, 'vfy-other');
    expect(json).toEqual([
      { field: 'orderId', body: '{"orderId":"vfy-other","amount":100}', url: bare.url },
      { field: 'amount', body: '{"orderId":"{{intentId}}","amount":101}', url: bare.url },
    ]);
  });

  it('finds nothing to change in opaque text, nor without a body or a query, nor under an ignored field', () => {
    const bare = { ...request, url: 'http://127.0.0.1:1/c' };
    // Changing text it cannot read would be refused as malformed, not as a reused key: no variation, so the scenario is skipped.
    expect(variations({ ...bare, body: 'charge {{intentId}} for 100 EUR' }, 'vfy-other')).toEqual([]);
    expect(variations({ ...bare, body: undefined }, 'vfy-other')).toEqual([]);
    expect(
      variations({ ...bare, body: { metadata: { note: 'x', tag: 'y' }, amount: 1 }, ignoredFields: ['metadata'] }, 'o').map((v) => v.field),
    ).toEqual(['amount']);
  });
});
