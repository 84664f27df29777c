import { isFinalAnswer } from './client-driver';
import type { Call, History, LedgerCharge } from './history';

/** The four invariants over a whole history, each with the intents that break it (by id). */
export interface Verdict {
  /** Intents with more than one ledger line. */
  doubleCharges: number[];
  /** Intents whose caller got a 2xx, with no ledger line. */
  lostCharges: number[];
  /** Intents with no final answer, or no charge, after the settle phase. */
  unsettled: number[];
  /** 2xx answers whose body is not the intent's charge, as [intent, call index in the history]. */
  mismatchedReplays: Array<[intent: number, call: number]>;
}

/** True when the verdict holds no broken invariant. */
export function holds(verdict: Verdict): boolean {
  return verdict.doubleCharges.length + verdict.lostCharges.length + verdict.unsettled.length + verdict.mismatchedReplays.length === 0;
}

/** The intents a verdict names, each once, in order. */
export function offenders(verdict: Verdict): number[] {
  const ids = [
    ...verdict.doubleCharges,
    ...verdict.lostCharges,
    ...verdict.unsettled,
    ...verdict.mismatchedReplays.map(([intent]) => intent),
  ];
  return [...new Set(ids)].sort((a, b) => a - b);
}

/** True when a 2xx body says what the ledger says of the charge: same order, same charge, same amount. */
function bodyMatches(body: unknown, charge: LedgerCharge | undefined, intent: { orderId: string; amountCents: number }): boolean {
  if (!charge || typeof body !== 'object' || body === null) return false;
  const { orderId, chargeId, amountCents } = body as Record<string, unknown>;
  return (
    orderId === intent.orderId &&
    chargeId === charge.chargeId &&
    amountCents === intent.amountCents &&
    charge.amountCents === intent.amountCents
  );
}

/**
 * Check a soak's history once its settle phase is over and every intent's
 * ledger lines are read. The ledger is the ground truth: one line per
 * intent, never two, never none once a caller was told it was paid, and
 * every 2xx any caller got for an intent describes that one line.
 */
export function check(history: Pick<History, 'intents' | 'calls' | 'ledger'>): Verdict {
  const callsOf = new Map<number, Array<[Call, number]>>();
  history.calls.forEach((call, index) => callsOf.set(call.intent, [...(callsOf.get(call.intent) ?? []), [call, index]]));
  const verdict: Verdict = { doubleCharges: [], lostCharges: [], unsettled: [], mismatchedReplays: [] };
  for (const intent of history.intents) {
    const lines = history.ledger.get(intent.id) ?? [];
    const calls = callsOf.get(intent.id) ?? [];
    const paid = calls.filter(([call]) => call.status !== undefined && call.status >= 200 && call.status < 300);
    if (lines.length > 1) verdict.doubleCharges.push(intent.id);
    if (paid.length > 0 && lines.length === 0) verdict.lostCharges.push(intent.id);
    if (!calls.some(([call]) => isFinalAnswer(call.status)) || lines.length === 0) verdict.unsettled.push(intent.id);
    for (const [call, index] of paid) if (!bodyMatches(call.body, lines[0], intent)) verdict.mismatchedReplays.push([intent.id, index]);
  }
  return verdict;
}
