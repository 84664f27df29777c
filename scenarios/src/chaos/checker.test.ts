import { check, holds, offenders } from './checker';
import { History, type LedgerCharge } from './history';

function soak(): History {
  const history = new History(0);
  history.addIntent({ orderId: 'o-0', account: 'a', amountCents: 500, key: 'k-0', duplicate: false });
  history.addIntent({ orderId: 'o-1', account: 'a', amountCents: 700, key: 'k-1', duplicate: true });
  return history;
}

const line = (orderId: string, chargeId: string, amountCents: number): LedgerCharge => ({
  chargeId,
  orderId,
  account: 'a',
  amountCents,
  epoch: 1,
  at: '2026-01-01T00:00:00.000Z',
});
const paid = (intent: number, orderId: string, chargeId: string, amountCents: number, caller = 0) => ({
  intent,
  caller,
  phase: 'soak' as const,
  startedAt: 0,
  endedAt: 1,
  attempts: 1,
  status: 201,
  body: { orderId, chargeId, amountCents, status: 'paid' },
});

describe('check', () => {
  it('holds for a history where every intent was charged once and told so', () => {
    const history = soak();
    history.addCall(paid(0, 'o-0', 'ch-0', 500));
    history.addCall(paid(1, 'o-1', 'ch-1', 700));
    history.addCall({ ...paid(1, 'o-1', 'ch-1', 700, 1), replayed: true });
    history.ledger.set(0, [line('o-0', 'ch-0', 500)]);
    history.ledger.set(1, [line('o-1', 'ch-1', 700)]);
    expect(holds(check(history))).toBe(true);
  });

  it('finds a double charge, and the replay that names only one of the two', () => {
    const history = soak();
    history.addCall(paid(0, 'o-0', 'ch-0', 500));
    history.addCall(paid(1, 'o-1', 'ch-1', 700));
    history.addCall(paid(1, 'o-1', 'ch-2', 700, 1));
    history.ledger.set(0, [line('o-0', 'ch-0', 500)]);
    history.ledger.set(1, [line('o-1', 'ch-1', 700), line('o-1', 'ch-2', 700)]);
    const verdict = check(history);
    expect(verdict.doubleCharges).toEqual([1]);
    expect(verdict.mismatchedReplays).toEqual([[1, 2]]);
    expect(offenders(verdict)).toEqual([1]);
  });

  it('finds a charge the caller was told of that the ledger does not have, and an intent never answered', () => {
    const history = soak();
    history.addCall(paid(0, 'o-0', 'ch-0', 500));
    history.addCall({ intent: 1, caller: 0, phase: 'settle', startedAt: 0, endedAt: 1, attempts: 6, error: 'retries exhausted' });
    history.ledger.set(1, [line('o-1', 'ch-1', 700)]);
    const verdict = check(history);
    expect(verdict.lostCharges).toEqual([0]);
    expect(verdict.unsettled).toEqual([0, 1]);
  });

  it('counts a final 4xx with no charge as unsettled, and a 2xx with another amount as a mismatched replay', () => {
    const history = soak();
    history.addCall({ intent: 0, caller: 0, phase: 'soak', startedAt: 0, endedAt: 1, attempts: 1, status: 422, body: {} });
    history.addCall(paid(1, 'o-1', 'ch-1', 999));
    history.ledger.set(1, [line('o-1', 'ch-1', 700)]);
    const verdict = check(history);
    expect(verdict.unsettled).toEqual([0]);
    expect(verdict.mismatchedReplays).toEqual([[1, 1]]);
  });
});
