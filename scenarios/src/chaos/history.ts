import type { AttemptEvent } from '@idempotency-chain/http-client';
import { hashKey } from '@idempotency-chain/idempotency';
import type { Charge } from '@idempotency-chain/payments';
import { EventEmitter } from 'node:events';
import { chainKeys } from '../chain-keys';
import type { LabEvent } from '../timeline';
import type { FaultKind } from './fault-schedule';

/** One user action: a fresh order and its own key, sent by one caller or two at once. */
export interface Intent {
  id: number;
  orderId: string;
  account: string;
  amountCents: number;
  key: string;
  keyHash: string;
  /** Sent by two callers at the same time (a double click). */
  duplicate: boolean;
}

/** One call of a caller for an intent: its attempts with one key, and what it ended with. */
export interface Call {
  intent: number;
  /** Which of the intent's callers (0, or 1 for the duplicate). */
  caller: number;
  phase: 'soak' | 'settle';
  startedAt: number;
  endedAt: number;
  attempts: number;
  /** The answer, when the call got one it does not retry. */
  status?: number;
  body?: unknown;
  replayed?: boolean;
  /** Why it ended without one (its retries ran out, its deadline passed). */
  error?: string;
}

/** One attempt of a call, as the caller's client reported it. */
export type AttemptRecord = Pick<AttemptEvent, 'callId' | 'attempt' | 'outcome' | 'status' | 'startedAt' | 'durationMs' | 'replayed'> & {
  intent: number;
};

/** One line of payments' ledger, as `GET /charges?orderId=` shows it. */
export type LedgerCharge = Charge;

/** One fault that happened: injected by the run (a signal, a Redis outage) or logged by a service's fault point. */
export interface FaultRecord {
  kind: FaultKind;
  target: string;
  how?: string;
  /** When it struck (epoch ms), and for how long it was meant to last. */
  at: number;
  ms?: number;
}

/** The lab's fault points, as the lab logs them, by the kind a soak counts them as. */
const LOGGED_FAULTS: Record<string, FaultKind> = {
  loseReplies: 'lostReply',
  slowFirstReplies: 'slowFirstAttempt',
  stallHolders: 'leaseExpiry',
  crashAfterSideEffect: 'kill',
};

/**
 * Everything a soak saw: the intents, every call and attempt the callers
 * made, every fault, and (after the settle phase) every intent's ledger
 * lines. The checker reads nothing else. Tells `onFault` listeners of each
 * fault a service logs, so the injector can wait for an armed one to strike.
 */
export class History extends EventEmitter {
  readonly intents: Intent[] = [];
  readonly calls: Call[] = [];
  readonly attempts: AttemptRecord[] = [];
  readonly faults: FaultRecord[] = [];
  readonly ledger = new Map<number, LedgerCharge[]>();
  /** The services' own log lines about each intent, kept for the intents the checker names. */
  serviceEvents: LabEvent[] = [];
  private readonly byKeyHash = new Map<string, number>();

  constructor(
    /** When the soak started (epoch ms): times in reports are relative to it. */
    public startedAt: number,
  ) {
    super();
    // One listener per fault lane waiting for its armed fault to strike.
    this.setMaxListeners(100);
  }

  /** A new intent with a fresh key. */
  addIntent(intent: Omit<Intent, 'id' | 'keyHash'>): Intent {
    const recorded = { ...intent, id: this.intents.length, keyHash: hashKey(intent.key) };
    this.intents.push(recorded);
    // Each hop logs the key it got, derived from the one before: all of them are this intent's.
    for (const key of Object.values(chainKeys(intent.key, intent.account))) this.byKeyHash.set(hashKey(key), recorded.id);
    return recorded;
  }

  addCall(call: Call): void {
    this.calls.push(call);
  }

  /** An attempt the caller's client reported, tied to its intent by the key's hash. */
  addAttempt(event: AttemptEvent): void {
    const intent = event.keyHash === undefined ? undefined : this.byKeyHash.get(event.keyHash);
    if (intent === undefined) return;
    const { callId, attempt, outcome, status, startedAt, durationMs, replayed } = event;
    this.attempts.push({ intent, callId, attempt, outcome, status, startedAt, durationMs, replayed });
  }

  addFault(fault: FaultRecord): void {
    this.faults.push(fault);
    this.emit('fault', fault);
  }

  /** A line of a service's log: a fault point that struck is a fault. */
  addServiceEvent(event: LabEvent): void {
    const kind = event.event === 'fault' ? LOGGED_FAULTS[event.fault ?? ''] : undefined;
    if (kind) this.addFault({ kind, target: event.service, how: kind === 'kill' ? 'after-charge' : undefined, at: event.time });
  }

  /** The intent a key's hash belongs to: the caller's key, or the key it has further down the chain. */
  intentOfKeyHash(keyHash: string): number | undefined {
    return this.byKeyHash.get(keyHash);
  }
}
