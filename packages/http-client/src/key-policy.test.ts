import { deriveBusinessKey, deriveChildKey } from './derived-key';
import { checkKeyPolicy, keyForAttempt, resolveIntentKey, type KeyStrategy } from './key-policy';

const UUID = /^[0-9a-f-]{36}$/;

describe('resolveIntentKey under propagated', () => {
  it('prefers the explicit key, sent verbatim', () => {
    expect(resolveIntentKey('propagated', { key: 'mine', inboundKey: 'in', businessKey: 'b', callName: 'c' })).toBe('mine');
  });

  it('takes the inbound key, or its child when the call is named', () => {
    expect(resolveIntentKey('propagated', { inboundKey: 'in', businessKey: 'b' })).toBe('in');
    expect(resolveIntentKey('propagated', { inboundKey: 'in', callName: 'charge' })).toBe(deriveChildKey('in', 'charge'));
  });

  it('derives from business identity when no key is bound', () => {
    expect(resolveIntentKey('propagated', { businessKey: 'order:1' })).toBe(deriveBusinessKey('order:1'));
    expect(resolveIntentKey('propagated', { businessKey: 'order:1', callName: 'c' })).toBe(
      deriveChildKey(deriveBusinessKey('order:1'), 'c'),
    );
  });

  it('mints a fresh UUID otherwise', () => {
    const first = resolveIntentKey('propagated', {});
    expect(first).toMatch(UUID);
    expect(resolveIntentKey('propagated', {})).not.toBe(first);
  });

  it('refuses an explicit key that the next hop would read differently', () => {
    expect(() => resolveIntentKey('propagated', { key: '' })).toThrow();
    expect(() => resolveIntentKey('propagated', { key: 'x'.repeat(256) })).toThrow();
    expect(() => resolveIntentKey('propagated', { key: 'clé' })).toThrow();
  });
});

describe('the other policies', () => {
  it('none resolves no key, and sends none', () => {
    expect(resolveIntentKey('none', { key: 'k', inboundKey: 'in' })).toBeUndefined();
    expect(keyForAttempt('none', undefined, 1)).toBeUndefined();
  });

  it('propagated repeats the intent key on every attempt', () => {
    expect([1, 2, 3].map((attempt) => keyForAttempt('propagated', 'k', attempt))).toEqual(['k', 'k', 'k']);
  });

  it('a strategy decides both keys: here a new key on every attempt, whatever the intent', () => {
    const perAttempt: KeyStrategy = { intentKey: () => undefined, attemptKey: (_intent, attempt) => `attempt-${attempt}` };
    expect(resolveIntentKey(perAttempt, { key: 'k', inboundKey: 'in' })).toBeUndefined();
    expect([1, 2].map((attempt) => keyForAttempt(perAttempt, undefined, attempt))).toEqual(['attempt-1', 'attempt-2']);
    expect(keyForAttempt({ intentKey: () => 'intent' }, 'intent', 2)).toBe('intent');
  });

  it("checks a strategy's keys like an explicit one, and refuses a policy it does not know", () => {
    expect(() => resolveIntentKey({ intentKey: () => 'clé' }, {})).toThrow();
    expect(() => keyForAttempt({ intentKey: () => undefined, attemptKey: () => '' }, undefined, 1)).toThrow();
    expect(() => checkKeyPolicy('propagate')).toThrow("keyPolicy must be 'propagated', 'none' or a KeyStrategy");
    expect(checkKeyPolicy('none')).toBe('none');
  });
});
