import { Lab } from './lab-processes';

// Three real Node processes (gateway -> orders -> payments) on a shared 2-core machine.
jest.setTimeout(180_000);

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
 * Two tenants of the gateway send the same key, `order-1001` (a natural key,
 * or one learned from the other tenant), for the same order id. Orders and
 * payments scope as `shared`: only the gateway calls them.
 */
describe('two tenants sending one key through the chain', () => {
  const lab = new Lab({ env: { IDEMPOTENCY_STORE: 'memory', KEY_POLICY: 'propagated' } });
  beforeAll(() => lab.start());
  afterAll(() => lab.stop());

  async function checkout(account: string, orderId: string, key?: string): Promise<Checkout> {
    const response = await fetch(`${lab.url('gateway')}/checkout`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(key !== undefined && { 'idempotency-key': key }) },
      body: JSON.stringify({ orderId, account, amountCents: 500 }),
    });
    const body = (await response.json()) as { chargeId?: string };
    return { status: response.status, chargeId: body.chargeId, replayed: response.headers.get('idempotent-replayed') === 'true' };
  }

  /** The charges payments holds for `orderId`, per account: the ground truth. */
  async function chargesPerAccount(orderId: string): Promise<Record<string, string[]>> {
    const ledger = (await (await fetch(`${lab.url('payments')}/charges?orderId=${orderId}`)).json()) as { charges: LedgerLine[] };
    const perAccount: Record<string, string[]> = {};
    for (const charge of ledger.charges) (perAccount[charge.account] ??= []).push(charge.chargeId);
    return perAccount;
  }

  it('charges each tenant once and answers each with its own charge, first time and on retry', async () => {
    const a = await checkout('tenant-a', 'order-1001', 'order-1001');
    const b = await checkout('tenant-b', 'order-1001', 'order-1001');
    expect([a.status, b.status]).toEqual([201, 201]);
    expect(b.chargeId).not.toBe(a.chargeId);

    const [aAgain, bAgain] = [
      await checkout('tenant-a', 'order-1001', 'order-1001'),
      await checkout('tenant-b', 'order-1001', 'order-1001'),
    ];
    expect(aAgain).toEqual({ status: 201, chargeId: a.chargeId, replayed: true });
    expect(bAgain).toEqual({ status: 201, chargeId: b.chargeId, replayed: true });

    expect(await chargesPerAccount('order-1001')).toEqual({ 'tenant-a': [a.chargeId], 'tenant-b': [b.chargeId] });
  });

  it('keeps the business key (the order id) of one tenant apart from the same order id of another', async () => {
    // No key: the gateway keys its calls on the order id, which is per tenant.
    const a = await checkout('tenant-a', 'order-2002');
    const b = await checkout('tenant-b', 'order-2002');
    expect([a.status, b.status]).toEqual([201, 201]);
    expect(b.chargeId).not.toBe(a.chargeId);
    expect(await chargesPerAccount('order-2002')).toEqual({ 'tenant-a': [a.chargeId], 'tenant-b': [b.chargeId] });
  });
});
