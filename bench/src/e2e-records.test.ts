import { recordKeys } from './e2e-records';

describe('recordKeys', () => {
  const checkout = { key: 'k-1', account: 'acct-a', orderId: 'o-1' };

  test('the gateway scopes its record by the calling account; orders and payments share one scope', () => {
    const a = recordKeys(checkout);
    const b = recordKeys({ ...checkout, account: 'acct-b' });
    expect(a.gateway).not.toBe(b.gateway);
    expect(a.orders).toBe(b.orders);
    expect(a.payments).toBe(b.payments);
  });

  test('each hop has its own record, a hash with no user text in it', () => {
    const keys = Object.values(recordKeys(checkout));
    expect(new Set(keys).size).toBe(3);
    for (const key of keys) for (const text of ['k-1', 'acct-a', 'gateway', 'orders', 'payments']) expect(key).not.toContain(text);
  });
});
