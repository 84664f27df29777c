import { deriveBusinessKey, deriveChildKey, deriveHopKey } from './derived-key';
import { checkKeyPolicy, keyForAttempt, resolveIntentKey, type KeyStrategy } from './key-policy';

const UUID = /^[0-9a-f-]{36}$/;

describe('resolveIntentKey under propagated', () => {
  it('prefers the explicit key, sent verbatim', () => {
    expect(resolveIntentKey('propagated', { key: 'mine', inboundKey: 'in', businessKey: 'b', callName: 'c' })).toBe('mine');
  });

  it('under forwardUnboundKey, takes the inbound key no hop identified, or its child when the call is named', () => {
    const forwarded = { inboundKey: 'in', forwardUnboundKey: true };
    expect(resolveIntentKey('propagated', { ...forwarded, businessKey: 'b', scope: 'shared' })).toBe('in');
    expect(resolveIntentKey('propagated', { ...forwarded, callName: 'charge' })).toBe(deriveChildKey('in', 'charge'));
  });

  it("refuses an inbound key no hop identified: two callers' order-1 would be one downstream record", () => {
    const refusal = /no @Idempotent route has identified the request.*forwardUnboundKey: true/;
    expect(() => resolveIntentKey('propagated', { inboundKey: 'order-1' })).toThrow(refusal);
    expect(() => resolveIntentKey('propagated', { inboundKey: 'order-1', callName: 'charge' })).toThrow(refusal);
    expect(() => resolveIntentKey('propagated', { inboundKey: 'order-1', businessKey: 'b', scope: 'account:a' })).toThrow(refusal);
    // The call's own key is its own statement, and no inbound key means nothing to forward.
    expect(resolveIntentKey('propagated', { inboundKey: 'order-1', key: 'mine' })).toBe('mine');
  });

  it("derives from business identity within the call's scope when no key is bound, and needs one without a hop", () => {
    const [a, b] = ['account:a', 'account:b'].map((scope) => resolveIntentKey('propagated', { businessKey: 'order:42:charge', scope }));
    expect(a).toBe(deriveBusinessKey('order:42:charge', 'account:a'));
    expect(b).not.toBe(a); // every tenant has an order 42
    expect(resolveIntentKey('propagated', { businessKey: 'order:1', scope: 'shared' })).toBe(deriveBusinessKey('order:1'));
    expect(resolveIntentKey('propagated', { businessKey: 'order:1', scope: 'shared', callName: 'c' })).toBe(
      deriveChildKey(deriveBusinessKey('order:1'), 'c'),
    );
    const refusal = /businessKey outside a request an @Idempotent route identified needs the caller's `scope`/;
    expect(() => resolveIntentKey('propagated', { businessKey: 'order:42:charge' })).toThrow(refusal);
    expect(() => resolveIntentKey('propagated', { businessKey: 'order:42:charge', scope: '' })).toThrow(refusal);
  });

  describe('once the hop has identified the inbound request', () => {
    const hop = (scope: string, key: string, fingerprinted = false) => ({
      service: 'gateway',
      operation: 'gateway.checkout',
      scope,
      key,
      fingerprinted,
    });

    it("sends the caller's record, not its key: two callers with one key send two keys, each the same on every retry", () => {
      const a = resolveIntentKey('propagated', { inboundKey: 'order-1001', hop: hop('account:a', 'order-1001') });
      const b = resolveIntentKey('propagated', { inboundKey: 'order-1001', hop: hop('account:b', 'order-1001') });
      expect(a).toBe(deriveHopKey(hop('account:a', 'order-1001')));
      expect(b).not.toBe(a);
      expect(resolveIntentKey('propagated', { inboundKey: 'order-1001', hop: hop('account:a', 'order-1001') })).toBe(a);
      expect(resolveIntentKey('propagated', { inboundKey: 'order-1001', hop: hop('account:a', 'order-1001'), callName: 'c' })).toBe(
        deriveChildKey(a!, 'c'),
      );
    });

    it('sends a keyless request its fingerprint record, the same on every execution', () => {
      const sources = { hop: hop('account:a', 'f'.repeat(64), true) };
      expect(resolveIntentKey('propagated', sources)).toBe(deriveHopKey(sources.hop));
      expect(resolveIntentKey('propagated', sources)).toBe(resolveIntentKey('propagated', sources));
    });

    it("derives a business key within the caller's scope, and prefers it to the fingerprint", () => {
      const fingerprinted = { businessKey: 'order-1001', hop: hop('account:a', 'f'.repeat(64), true) };
      expect(resolveIntentKey('propagated', fingerprinted)).toBe(deriveBusinessKey('order-1001', 'account:a'));
      expect(resolveIntentKey('propagated', { ...fingerprinted, hop: hop('account:b', 'f'.repeat(64), true) })).not.toBe(
        resolveIntentKey('propagated', fingerprinted),
      );
      // The call's scope, when it states one, outranks the hop's.
      expect(resolveIntentKey('propagated', { ...fingerprinted, scope: 'shared' })).toBe(deriveBusinessKey('order-1001'));
      // A key the caller chose still comes first.
      expect(resolveIntentKey('propagated', { inboundKey: 'k', businessKey: 'order-1001', hop: hop('account:a', 'k') })).toBe(
        deriveHopKey(hop('account:a', 'k')),
      );
    });
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
