import { Lab } from './lab-processes';

// Three real Node processes (gateway -> orders -> payments) on a shared 2-core machine.
vi.setConfig({ testTimeout: 180_000, hookTimeout: 180_000 });

interface Checkout {
  status: number;
  chargeId?: string;
  replayed: boolean;
}

interface LedgerLine {
  account: string;
  chargeId: string;
}

/**
 * Two customers of the gateway, each with its own key (its principal), send
 * the same idempotency key, `order-1001` (a natural key, or one learned from
 * the other), with the same body, for the same order id. The gateway scopes
 * its records by the principal; orders and payments scope as `shared` (only
 * their neighbour calls them, with the hop's service token), and get each
 * customer's scope in the keys derived from the gateway's records.
 */
describe('two principals sending one key through the chain', () => {
  const lab = new Lab({ env: { IDEMPOTENCY_STORE: 'memory', KEY_POLICY: 'propagated' }, accounts: ['tenant-a', 'tenant-b'] });
  beforeAll(() => lab.start());
  afterAll(() => lab.stop());

  /** A checkout by the customer `principal`, whose body names no account: the principal's is charged. */
  async function checkout(principal: string, orderId: string, key?: string): Promise<Checkout> {
    const response = await fetch(`${lab.url('gateway')}/checkout`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: lab.authorization(principal),
        ...(key !== undefined && { 'idempotency-key': key }),
      },
      body: JSON.stringify({ orderId, amountCents: 500 }),
    });
    const body = (await response.json()) as { chargeId?: string };
    return { status: response.status, chargeId: body.chargeId, replayed: response.headers.get('idempotent-replayed') === 'true' };
  }

  /** The charges payments holds for `orderId`, per account: the ground truth. */
  async function chargesPerAccount(orderId: string): Promise<Record<string, string[]>> {
    const response = await fetch(`${lab.url('payments')}/charges?orderId=${orderId}`, { headers: lab.ledgerHeaders() });
    const ledger = (await response.json()) as { charges: LedgerLine[] };
    const perAccount: Record<string, string[]> = {};
    for (const charge of ledger.charges) (perAccount[charge.account] ??= []).push(charge.chargeId);
    return perAccount;
  }

  it('charges each principal once and answers each with its own charge, first time and on retry', async () => {
    const a = await checkout('tenant-a', 'order-1001', 'order-1001');
    const b = await checkout('tenant-b', 'order-1001', 'order-1001');
    expect([a.status, b.status]).toEqual([201, 201]);
    // B's first send of A's key is no replay of A's answer: its own record, its own charge.
    expect(b.replayed).toBe(false);
    expect(b.chargeId).not.toBe(a.chargeId);

    const [aAgain, bAgain] = [
      await checkout('tenant-a', 'order-1001', 'order-1001'),
      await checkout('tenant-b', 'order-1001', 'order-1001'),
    ];
    expect(aAgain).toEqual({ status: 201, chargeId: a.chargeId, replayed: true });
    expect(bAgain).toEqual({ status: 201, chargeId: b.chargeId, replayed: true });

    expect(await chargesPerAccount('order-1001')).toEqual({ 'tenant-a': [a.chargeId], 'tenant-b': [b.chargeId] });
  });

  it("answers a principal replaying another's key with its own record, never the other's answer", async () => {
    const b = await checkout('tenant-b', 'order-3003', 'key-of-b');
    // A presents B's key for an order of its own: a new record in A's scope, not a 422 nor B's charge.
    const a = await checkout('tenant-a', 'order-3004', 'key-of-b');
    expect([b.status, a.status]).toEqual([201, 201]);
    expect(a.replayed).toBe(false);
    const aAgain = await checkout('tenant-a', 'order-3004', 'key-of-b');
    expect(aAgain).toEqual({ status: 201, chargeId: a.chargeId, replayed: true });
    expect(await chargesPerAccount('order-3003')).toEqual({ 'tenant-b': [b.chargeId] });
    expect(await chargesPerAccount('order-3004')).toEqual({ 'tenant-a': [a.chargeId] });
  });

  it('keeps the business key (the order id) of one principal apart from the same order id of another', async () => {
    // No key: the gateway keys its calls on the order id, which is per principal.
    const a = await checkout('tenant-a', 'order-2002');
    const b = await checkout('tenant-b', 'order-2002');
    expect([a.status, b.status]).toEqual([201, 201]);
    expect(b.chargeId).not.toBe(a.chargeId);
    expect(await chargesPerAccount('order-2002')).toEqual({ 'tenant-a': [a.chargeId], 'tenant-b': [b.chargeId] });
  });

  it('answers a checkout without credentials, or with a wrong token, 401 and charges nothing', async () => {
    for (const headers of [{}, { authorization: `${lab.authorization('tenant-a')}x` }] as Array<Record<string, string>>) {
      const response = await fetch(`${lab.url('gateway')}/checkout`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': 'order-4004', ...headers },
        body: JSON.stringify({ orderId: 'order-4004', amountCents: 500 }),
      });
      expect(response.status).toBe(401);
      expect(response.headers.get('content-type')).toContain('application/problem+json');
    }
    expect(await chargesPerAccount('order-4004')).toEqual({});
  });

  it('answers an inner hop called without its service token 401', async () => {
    const order = JSON.stringify({ orderId: 'order-5005', account: 'tenant-a', amountCents: 500 });
    for (const [service, path] of [
      ['orders', '/orders'],
      ['payments', '/charges'],
    ] as const) {
      const response = await fetch(`${lab.url(service)}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': 'order-5005', authorization: lab.authorization('tenant-a') },
        body: order,
      });
      expect(response.status).toBe(401);
    }
    expect((await fetch(`${lab.url('payments')}/charges?orderId=order-5005`)).status).toBe(401);
    expect(await chargesPerAccount('order-5005')).toEqual({});
  });
});
