import { parseIdempotencyKey } from '@idempotency-chain/idempotency';
import { deriveBusinessKey, deriveChildKey, deriveHopKey } from './derived-key';

const UUID_V8 = /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('deriveChildKey', () => {
  it('is deterministic: a retried parent reproduces the same child keys', () => {
    expect(deriveChildKey('order-42', 'charge')).toBe(deriveChildKey('order-42', 'charge'));
  });

  it('gives distinct keys per call name and per parent', () => {
    const keys = new Set([
      deriveChildKey('order-42', 'charge'),
      deriveChildKey('order-42', 'reserve'),
      deriveChildKey('order-43', 'charge'),
      deriveChildKey('order-42', ''),
    ]);
    expect(keys.size).toBe(4);
  });

  it('is a UUIDv8 every hop accepts as a key', () => {
    const key = deriveChildKey('order-42', 'charge');
    expect(key).toMatch(UUID_V8);
    expect(parseIdempotencyKey(key)).toBe(key);
  });
});

describe('deriveBusinessKey', () => {
  it('maps one business identity to one key, and never to a child key', () => {
    expect(deriveBusinessKey('order:42:charge')).toBe(deriveBusinessKey('order:42:charge'));
    expect(deriveBusinessKey('order:42:charge')).not.toBe(deriveBusinessKey('order:43:charge'));
    expect(deriveBusinessKey('x')).toMatch(UUID_V8);
  });
});

describe('deriveBusinessKey within a scope', () => {
  it('gives two scopes two keys, and the shared scope the unscoped key', () => {
    expect(deriveBusinessKey('order-42', 'tenant:a')).not.toBe(deriveBusinessKey('order-42', 'tenant:b'));
    expect(deriveBusinessKey('order-42', 'tenant:a')).toBe(deriveBusinessKey('order-42', 'tenant:a'));
    expect(deriveBusinessKey('order-42', '')).toBe(deriveBusinessKey('order-42'));
    expect(deriveBusinessKey('["tenant:a","order-42"]')).not.toBe(deriveBusinessKey('order-42', 'tenant:a'));
  });
});

describe('deriveHopKey', () => {
  const hop = { service: 'gateway', operation: 'gateway.checkout', scope: 'account:a', key: 'order-1001' };

  it('is one key per record: the same for a retry, another for any other service, operation, scope or key', () => {
    expect(deriveHopKey(hop)).toBe(deriveHopKey({ ...hop }));
    expect(deriveHopKey(hop)).toMatch(UUID_V8);
    const others = [{ service: 'orders' }, { operation: 'gateway.refund' }, { scope: 'account:b' }, { scope: '' }, { key: 'order-1002' }];
    expect(new Set([hop, ...others.map((other) => ({ ...hop, ...other }))].map(deriveHopKey)).size).toBe(6);
  });

  it('cannot be spelled by another tuple', () => {
    expect(deriveHopKey({ ...hop, service: 'a', operation: 'b,c' })).not.toBe(deriveHopKey({ ...hop, service: 'a,b', operation: 'c' }));
    expect(deriveHopKey(hop)).not.toBe(deriveChildKey(hop.key, hop.scope));
  });
});
