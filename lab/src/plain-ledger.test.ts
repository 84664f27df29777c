import { MemoryLedger, type Ledger } from '@idempotency-chain/payments/ledger';
import { PlainLedger } from './plain-ledger';

describe('PlainLedger (LAB_NAIVE=plain-ledger)', () => {
  it('charges every write, fenced or not, as the naive ledger does', async () => {
    const ledger = new MemoryLedger(60_000);
    const order = { orderId: 'o-plain', account: 'acct', amountCents: 500 };
    await ledger.charge(order);
    const plain: Ledger = new PlainLedger(ledger);
    await plain.charge(order, { recordKey: 'r', epoch: 1 });
    await plain.charge(order, { recordKey: 'r', epoch: 1 });
    expect(await plain.chargesOf(order.orderId)).toHaveLength(3);
  });
});
