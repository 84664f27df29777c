import type { LedgerLine, Policy, SequenceStep, Service } from '@idempotency-chain/scenarios';
import type { StoreView } from './console-store';
import type { LabState } from './lab-pool';

/** One answer the caller got (or is waiting for). */
export interface AnswerView {
  /** Which press: `Pay`, `Press again`, `Click 7`, ... */
  label: string;
  pending: boolean;
  status?: number;
  /** What came back, in words: `502 after 1275 ms`, `no answer: ...`. */
  text: string;
  /** The outermost hop that answered this press from its store, if one did. */
  replayedBy?: Service;
}

/** One checkout as the page draws it: its answers, its ledger and its sequence diagram. */
export interface CheckoutView {
  /** Grows with every action (a press, a double-click, a write-up policy). */
  action: number;
  title: string;
  policy: Policy;
  /** `running` until every press is answered; `settling` until late attempts have landed; then `settled`. */
  phase: 'running' | 'settling' | 'settled' | 'failed';
  answers: AnswerView[];
  charges: LedgerLine[];
  /** Epoch ms the diagram's `+N ms` are counted from. */
  origin: number;
  steps: SequenceStep[];
  /** What else happened: a service restarted, the store stopped, an error. */
  notes: string[];
}

/** One row of the write-up's table. */
export interface WriteUpRow {
  policy: Policy;
  charges: number;
  expected: number;
  caller: string;
  later: string;
}

/** The write-up, played policy by policy. */
export interface WriteUpView {
  phase: 'running' | 'done' | 'failed';
  /** The policy being played. */
  policy?: Policy;
  rows: WriteUpRow[];
  error?: string;
}

/** Everything the page shows; sent whole on every change (Server-Sent Events). */
export interface Snapshot {
  /** Absent until the console has chosen its store. */
  store?: StoreView;
  labs: Record<Policy, LabState>;
  busy?: 'checkout' | 'write-up';
  /** What the console is doing, in a sentence. */
  activity: string;
  current?: CheckoutView;
  writeUp?: WriteUpView;
}
