import { parseIdempotencyKey } from '@idempotency-chain/idempotency';
import { deriveBusinessKey, deriveChildKey } from './derived-key';

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
