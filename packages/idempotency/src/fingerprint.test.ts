import { InvalidRequestError } from './errors';
import { pickFields, requestFingerprint } from './fingerprint';

const base = { method: 'POST', path: '/charges', body: { orderId: 'o-1', account: 'acct-1', amountCents: 500 } };

describe('requestFingerprint', () => {
  it('is a SHA-256 hex digest, stable for the same request', () => {
    expect(requestFingerprint(base)).toMatch(/^[0-9a-f]{64}$/);
    expect(requestFingerprint(base)).toBe(requestFingerprint({ ...base, body: { ...base.body } }));
  });

  it('does not depend on key order, at any depth', () => {
    const a = { method: 'POST', path: '/charges', body: { a: 1, b: { x: 1, y: [1, { p: 1, q: 2 }] } } };
    const b = { path: '/charges', body: { b: { y: [1, { q: 2, p: 1 }], x: 1 }, a: 1 }, method: 'POST' };
    expect(requestFingerprint(a)).toBe(requestFingerprint(b));
  });

  it('does not depend on number spelling', () => {
    const spelled = (json: string) => requestFingerprint({ ...base, body: JSON.parse(json) });
    expect(spelled('{"amountCents": 1.0}')).toBe(spelled('{"amountCents": 1}'));
    expect(spelled('{"amountCents": 1e2}')).toBe(spelled('{"amountCents": 100}'));
    expect(spelled('{"amountCents": 1}')).not.toBe(spelled('{"amountCents": "1"}'));
  });

  it('does not depend on the method’s case', () => {
    expect(requestFingerprint({ ...base, method: 'post' })).toBe(requestFingerprint(base));
  });

  it('changes with the method, the concrete path, the query and the body', () => {
    const original = requestFingerprint(base);
    expect(requestFingerprint({ ...base, method: 'PUT' })).not.toBe(original);
    expect(requestFingerprint({ ...base, path: '/refunds' })).not.toBe(original);
    expect(requestFingerprint({ ...base, path: '/orders/1/refund' })).not.toBe(requestFingerprint({ ...base, path: '/orders/2/refund' }));
    expect(requestFingerprint({ ...base, query: 'orderId=A' })).not.toBe(requestFingerprint({ ...base, query: 'orderId=B' }));
    expect(requestFingerprint({ ...base, query: 'a=1' })).not.toBe(original);
    expect(requestFingerprint({ ...base, body: { ...base.body, amountCents: 501 } })).not.toBe(original);
    expect(requestFingerprint({ ...base, body: { ...base.body, note: 'extra' } })).not.toBe(original);
  });

  it('does not depend on the order of query parameters, nor on their spelling', () => {
    const query = (q: string) => requestFingerprint({ ...base, query: q });
    expect(query('b=2&a=0&a=1')).toBe(query('a=0&a=1&b=2'));
    expect(query('to=A&to=B')).not.toBe(query('to=B&to=A')); // a repeated name is an ordered list
    expect(query('note=a%20b')).toBe(query('note=a+b'));
    expect(query('a=1&a=2')).not.toBe(query('a=1'));
    expect(query('')).toBe(requestFingerprint(base));
  });

  it('fingerprints a body of bytes by its bytes, apart from any JSON body', () => {
    const bytes = (b: Uint8Array) => requestFingerprint({ ...base, body: b });
    expect(bytes(Buffer.from('abc'))).toBe(bytes(new Uint8Array([97, 98, 99])));
    expect(bytes(Buffer.from('abc'))).not.toBe(bytes(Buffer.from('abd')));
    expect(bytes(Buffer.from('abc'))).not.toBe(requestFingerprint({ ...base, body: 'abc' }));
  });

  it('refuses a body nested deeper than the canonical form allows with a 400 InvalidRequestError, not a stack overflow', () => {
    const deep = JSON.parse(`${'['.repeat(20_000)}${']'.repeat(20_000)}`);
    expect(() => requestFingerprint({ ...base, body: deep })).toThrow(InvalidRequestError);
    expect(() => requestFingerprint({ ...base, body: deep })).toThrow(/nested deeper than 64 levels/);
    const deepest = JSON.parse(`${'['.repeat(64)}${']'.repeat(64)}`);
    expect(requestFingerprint({ ...base, body: deepest })).toMatch(/^[0-9a-f]{64}$/);
  });

  it('keeps the digests of requests fingerprinted before: records stored by an earlier release still match', () => {
    expect(requestFingerprint({ ...base, method: 'post', query: 'b=2&a=1' })).toBe(
      '08f370d0831537aa4df42f6d6d65ffa9e6404c9e044909a4095de4e8814e41e6',
    );
    expect(requestFingerprint({ method: 'GRAPHQL', path: 'Mutation.charge', body: { amountCents: 500 } })).toBe(
      'd732f230a486cf2a26ce1d251ac7ec4080dbe65cf027255b58dbe1bb1df11e10',
    );
    const upload = { field: 'f', name: 'a.txt', type: 'text/plain', size: 3, bytes: Buffer.from('abc') };
    expect(requestFingerprint({ method: 'POST', path: '/upload', body: Buffer.from('abc'), files: [upload] })).toBe(
      '557b5d852fb4faa662058dad365b80c06153007d8e671c354de3d346b1314e47',
    );
  });

  it("fingerprints a custom scalar's bigint, Map or Set by its value: another value is another request", () => {
    const graphql = (args: unknown) => requestFingerprint({ method: 'GRAPHQL', path: 'Mutation.pay', body: args });
    expect(graphql({ amount: 9007199254740993n })).toBe(graphql({ amount: 9007199254740993n }));
    expect(graphql({ amount: 9007199254740993n })).not.toBe(graphql({ amount: 9007199254740992n }));
    expect(graphql({ amount: 500n })).not.toBe(graphql({ amount: 500 }));
    expect(graphql({ amount: 500n })).not.toBe(graphql({ amount: '500n' }));
    const counts = (entries: Array<[string, number]>) => graphql({ counts: new Map(entries) });
    expect(
      counts([
        ['a', 1],
        ['b', 2],
      ]),
    ).toBe(
      counts([
        ['b', 2],
        ['a', 1],
      ]),
    );
    expect(counts([['a', 1]])).not.toBe(counts([['a', 2]]));
    expect(counts([])).not.toBe(graphql({ counts: {} }));
    expect(graphql({ tags: new Set(['x', 'y']) })).toBe(graphql({ tags: new Set(['y', 'x']) }));
    expect(graphql({ tags: new Set(['x']) })).not.toBe(graphql({ tags: new Set(['y']) }));
  });

  it("fingerprints a Map's or a Set's own fields (a subclass's): the same entries in another currency are another request", () => {
    class Basket extends Map<string, number> {
      constructor(
        public currency: string,
        entries: Array<[string, number]>,
      ) {
        super(entries);
      }
    }
    const print = (body: unknown) => requestFingerprint({ ...base, body });
    expect(print({ basket: new Basket('EUR', [['sku-1', 2]]) })).not.toBe(print({ basket: new Basket('USD', [['sku-1', 2]]) }));
    expect(print({ basket: new Basket('EUR', [['sku-1', 2]]) })).toBe(print({ basket: new Basket('EUR', [['sku-1', 2]]) }));
    const tagged = (mode: string) => Object.assign(new Set(['x']), { mode });
    expect(print({ s: tagged('refund') })).not.toBe(print({ s: tagged('charge') }));
  });

  it('refuses a Map nested deeper than the canonical form allows with a 400 InvalidRequestError', () => {
    let deep: unknown = new Map();
    for (let level = 0; level < 20_000; level++) deep = new Map([['n', deep]]);
    expect(() => requestFingerprint({ ...base, body: deep })).toThrow(InvalidRequestError);
  });

  it('treats a missing body as null', () => {
    expect(requestFingerprint({ ...base, body: undefined })).toBe(requestFingerprint({ ...base, body: null }));
    expect(requestFingerprint({ ...base, body: undefined })).not.toBe(requestFingerprint({ ...base, body: {} }));
  });
});

describe('pickFields', () => {
  it('keeps only the named fields, so other fields do not change the fingerprint', () => {
    const fields = ['orderId', 'amountCents'];
    const picked = pickFields({ ...base.body, traceId: 't-1' }, fields);
    expect(picked).toEqual({ orderId: 'o-1', amountCents: 500 });
    const print = (body: unknown) => requestFingerprint({ ...base, body: pickFields(body, fields) });
    expect(print({ ...base.body, traceId: 't-1' })).toBe(print({ ...base.body, traceId: 't-2' }));
    expect(print({ ...base.body, amountCents: 700 })).not.toBe(print(base.body));
  });

  it('fills a missing field with null, and reads a non-object body as empty', () => {
    expect(pickFields({ orderId: 'o-1' }, ['orderId', 'amountCents'])).toEqual({ orderId: 'o-1', amountCents: null });
    expect(pickFields('text', ['orderId'])).toEqual({ orderId: null });
    expect(pickFields(null, ['orderId'])).toEqual({ orderId: null });
  });

  it("reads a Map body's entries by field name, so two Map messages differ as their named fields do", () => {
    const fields = ['orderId', 'amountCents'];
    const message = (amountCents: number) =>
      new Map<unknown, unknown>([
        ['orderId', 'o-1'],
        ['amountCents', amountCents],
        ['traceId', `t-${amountCents}`],
      ]);
    expect(pickFields(message(500), fields)).toEqual({ orderId: 'o-1', amountCents: 500 });
    const print = (body: unknown) => requestFingerprint({ ...base, body: pickFields(body, fields) });
    expect(print(message(500))).not.toBe(print(message(9_999)));
    expect(print(message(500))).toBe(print({ orderId: 'o-1', amountCents: 500, traceId: 'other' }));
    // By string key only: a field is a name, and a missing one is null.
    expect(pickFields(new Map<unknown, unknown>([[1, 'one']]), ['1'])).toEqual({ '1': null });
  });

  it('refuses a Proxy of a Map body, whose entries cannot be read, as the fingerprint does', () => {
    const proxied = new Proxy(new Map([['amountCents', 500]]), {});
    expect(() => pickFields(proxied, ['amountCents'])).toThrow(/^a Map that cannot be iterated/);
    expect(() => requestFingerprint({ ...base, body: { lines: proxied } })).toThrow(
      new TypeError('a Map that cannot be iterated (such as a Proxy of a Map) has no canonical form'),
    );
  });
});
