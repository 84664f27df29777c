import type { Ledger } from '@idempotency-chain/payments';
import { MemoryLedger } from './ledgers/memory-ledger';
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

  it("hands the app's ledger its boot and shutdown: Nest calls only the outermost instance's hooks", async () => {
    const calls: string[] = [];
    const inner = Object.assign(new MemoryLedger(60_000), {
      onModuleInit: async () => void calls.push('init'),
      onApplicationShutdown: async (signal?: string) => void calls.push(`shutdown ${signal}`),
    });
    const plain = new PlainLedger(inner);
    await plain.onModuleInit();
    await plain.onApplicationShutdown('SIGTERM');
    expect(calls).toEqual(['init', 'shutdown SIGTERM']);
  });
});
