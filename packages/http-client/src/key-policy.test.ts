import { deriveBusinessKey, deriveChildKey } from './derived-key';
import { keyForAttempt, resolveIntentKey } from './key-policy';

const UUID = /^[0-9a-f-]{36}$/;

describe('resolveIntentKey under propagate', () => {
  it('prefers the explicit key, sent verbatim', () => {
    expect(resolveIntentKey('propagate', { key: 'mine', inboundKey: 'in', businessKey: 'b', callName: 'c' })).toBe('mine');
  });

  it('takes the inbound key, or its child when the call is named', () => {
    expect(resolveIntentKey('propagate', { inboundKey: 'in', businessKey: 'b' })).toBe('in');
    expect(resolveIntentKey('propagate', { inboundKey: 'in', callName: 'charge' })).toBe(deriveChildKey('in', 'charge'));
  });

  it('derives from business identity when no key is bound', () => {
    expect(resolveIntentKey('propagate', { businessKey: 'order:1' })).toBe(deriveBusinessKey('order:1'));
    expect(resolveIntentKey('propagate', { businessKey: 'order:1', callName: 'c' })).toBe(
      deriveChildKey(deriveBusinessKey('order:1'), 'c'),
    );
  });

  it('mints a fresh UUID otherwise', () => {
    const first = resolveIntentKey('propagate', {});
    expect(first).toMatch(UUID);
    expect(resolveIntentKey('propagate', {})).not.toBe(first);
  });

  it('refuses an explicit key that the next hop would read differently', () => {
    expect(() => resolveIntentKey('propagate', { key: '' })).toThrow();
    expect(() => resolveIntentKey('propagate', { key: 'x'.repeat(256) })).toThrow();
    expect(() => resolveIntentKey('propagate', { key: 'clé' })).toThrow();
  });
});

describe('the other policies', () => {
  it('resolve no intent key', () => {
    expect(resolveIntentKey('per-attempt', { key: 'k', inboundKey: 'in' })).toBeUndefined();
    expect(resolveIntentKey('none', { key: 'k', inboundKey: 'in' })).toBeUndefined();
  });

  it('per-attempt mints a new key on every attempt; propagate repeats the intent key', () => {
    expect(keyForAttempt('per-attempt', undefined)).not.toBe(keyForAttempt('per-attempt', undefined));
    expect(keyForAttempt('propagate', 'k')).toBe('k');
    expect(keyForAttempt('none', undefined)).toBeUndefined();
  });
});
