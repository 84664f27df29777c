import { parseIdempotencyKey, type RequestIdentity } from '@idempotency-chain/idempotency';
import { deriveBusinessKey, deriveHopKey } from './derived-key';
import { resolveIntentKey } from './key-policy';
import { messageKey, messageKeyHeaders } from './message-key';
import { runWithRequestContext } from './request-context';

const hop: RequestIdentity = { service: 'orders', operation: 'orders.place', scope: 'shared', key: 'order-1', fingerprinted: false };

describe('messageKey', () => {
  it("is the key the HTTP client would send from the same request: the hop's record, the same on each retry", () => {
    const first = runWithRequestContext({ key: 'order-1', hop }, () => messageKey());
    const retry = runWithRequestContext({ key: 'order-1', hop }, () => messageKey());
    expect(first).toBe(deriveHopKey(hop));
    expect(retry).toBe(first);
    expect(first).toBe(
      runWithRequestContext({ key: 'order-1', hop }, () => resolveIntentKey('propagated', { inboundKey: 'order-1', hop })),
    );
  });

  it("differs for another caller's request with the same key, and per named message of one intent", () => {
    const other = { ...hop, scope: 'account:b' };
    const mine = runWithRequestContext({ key: 'order-1', hop }, () => messageKey());
    expect(runWithRequestContext({ key: 'order-1', hop: other }, () => messageKey())).not.toBe(mine);
    const charge = runWithRequestContext({ key: 'order-1', hop }, () => messageKey({ callName: 'charge' }));
    const receipt = runWithRequestContext({ key: 'order-1', hop }, () => messageKey({ callName: 'receipt' }));
    expect(new Set([mine, charge, receipt]).size).toBe(3);
  });

  it('gives no key where nothing names the intent, rather than a fresh one per publish', () => {
    expect(messageKey()).toBeUndefined();
    expect(runWithRequestContext({ deadline: Date.now() + 1000 }, () => messageKey())).toBeUndefined();
  });

  it("takes the message's own key or business key outside a request", () => {
    expect(messageKey({ key: 'k-7' })).toBe('k-7');
    expect(messageKey({ businessKey: 'order:42', scope: 'account:a' })).toBe(deriveBusinessKey('order:42', 'account:a'));
  });

  it('refuses an inbound key no @Idempotent route identified: whose key would it carry?', () => {
    expect(() => runWithRequestContext({ key: 'order-1' }, () => messageKey())).toThrow(/no @Idempotent route has identified/);
  });
});

describe('messageKeyHeaders', () => {
  it('writes the key as the HTTP header is, under the name every hop reads', () => {
    const headers = runWithRequestContext({ key: 'order-1', hop }, () => messageKeyHeaders());
    expect(Object.keys(headers)).toEqual(['idempotency-key']);
    expect(parseIdempotencyKey(headers['idempotency-key']!)).toBe(deriveHopKey(hop));
  });

  it('is empty when there is no key', () => {
    expect(messageKeyHeaders()).toEqual({});
  });
});
