import type { RunEnvironment } from '../environment';
import type { ChaosRunOutcome, ChaosStore } from './chaos-run';
import { offenders } from './checker';
import { FAULT_KINDS, type FaultKind } from './fault-schedule';

/** One store's soak as chaos.json keeps it. */
export interface ChaosRecord {
  seed: number;
  store: ChaosStore;
  /** `LAB_NAIVE` and `KEY_POLICY` of the run, when it ran a naive variant. */
  naive?: string;
  keyPolicy?: string;
  durationSeconds: number;
  settleSeconds: number;
  /** The whole store run: start, soak, settle, ledger, stop. */
  tookSeconds: number;
  /** User actions: each a fresh order and key. */
  checkouts: number;
  /** Of them, sent by two callers at once. */
  duplicates: number;
  calls: number;
  attempts: number;
  /** Intents whose first 2xx came during the soak, under the faults (the others were paid in the settle phase). */
  paidDuringSoak: number;
  /** The answer each call ended with (`gave-up` when its client ran out of attempts), by status. */
  answers: Record<string, number>;
  /** What each attempt got: a status, or how it failed (`timeout`, `reset`, `refused`). */
  attemptOutcomes: Record<string, number>;
  /** Faults that happened, per kind. */
  faults: Record<FaultKind, number>;
  faultsPlannedPerKind: number;
  /** Payments executions that lost their lease or had their completion refused as stale. */
  leaseLost: number;
  restarts: Record<string, number>;
  doubleCharges: number;
  lostCharges: number;
  unsettled: number;
  mismatchedReplays: number;
  /** The orders of the intents that broke an invariant (at most 20). */
  offendingOrders: string[];
  environment: Omit<RunEnvironment, 'store' | 'storeNote'>;
}

/** chaos.json: the runs of the last `npm run chaos`, one per store. */
export interface ChaosFile {
  runs: ChaosRecord[];
}

/** What chaos.json keeps of one soak. */
export function chaosRecord(
  outcome: ChaosRunOutcome,
  environment: ChaosRecord['environment'],
  naive: { naive?: string; keyPolicy?: string },
): ChaosRecord {
  const { history, verdict, settings } = outcome;
  const answers: Record<string, number> = {};
  for (const call of history.calls) {
    const answer = call.status === undefined ? 'gave-up' : String(call.status);
    answers[answer] = (answers[answer] ?? 0) + 1;
  }
  const attemptOutcomes: Record<string, number> = {};
  for (const attempt of history.attempts) {
    const outcome = attempt.status === undefined ? attempt.outcome : String(attempt.status);
    attemptOutcomes[outcome] = (attemptOutcomes[outcome] ?? 0) + 1;
  }
  const faults = Object.fromEntries(FAULT_KINDS.map((kind) => [kind, history.faults.filter((f) => f.kind === kind).length])) as Record<
    FaultKind,
    number
  >;
  return {
    seed: settings.seed,
    store: settings.store,
    ...naive,
    durationSeconds: Math.round(outcome.soakMs / 1000),
    settleSeconds: Math.round(outcome.settleMs / 1000),
    tookSeconds: Math.round(outcome.tookMs / 1000),
    checkouts: history.intents.length,
    duplicates: history.intents.filter((intent) => intent.duplicate).length,
    calls: history.calls.length,
    paidDuringSoak: new Set(
      history.calls.filter((c) => c.phase === 'soak' && c.status !== undefined && c.status < 300).map((c) => c.intent),
    ).size,
    attempts: history.attempts.length,
    answers,
    attemptOutcomes,
    faults,
    faultsPlannedPerKind: outcome.plannedPerKind,
    leaseLost: outcome.leaseLost,
    restarts: outcome.restarts,
    doubleCharges: verdict.doubleCharges.length,
    lostCharges: verdict.lostCharges.length,
    unsettled: verdict.unsettled.length,
    mismatchedReplays: verdict.mismatchedReplays.length,
    offendingOrders: offenders(verdict)
      .slice(0, 20)
      .map((id) => history.intents[id]!.orderId),
    environment,
  };
}

/** True when the record breaks no invariant. */
export function recordHolds(record: ChaosRecord): boolean {
  return record.doubleCharges + record.lostCharges + record.unsettled + record.mismatchedReplays === 0;
}
