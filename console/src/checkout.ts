import {
  callerFor,
  ledgerOf,
  newOrder,
  press,
  SETUP,
  sequenceSteps,
  type Lab,
  type LabEvent,
  type LedgerLine,
  type Policy,
} from '@idempotency-chain/scenarios';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { answersOf } from './answers';
import type { CheckoutView } from './snapshot';

/** How often the ledger is read while a checkout is not settled. */
const LEDGER_EVERY_MS = 250;
/** Settled only once nothing has happened for this long. */
const QUIET_MS = 500;
/** Bound on settling, for a chain that keeps retrying. */
const SETTLE_BOUND_MS = 30_000;

/**
 * One order under one policy, on that policy's lab: pressed once, again, or
 * many times at once, with the same key (under `propagated`) on every press,
 * as the user's client would. Its timeline is what the lab records from the
 * moment it starts; its ledger is read over HTTP like the runner does.
 */
export class Checkout {
  readonly order = newOrder('console');
  /** The caller's key, sent on every press: only `propagated` has the caller send one. */
  readonly key: string | undefined;
  readonly startedAt = Date.now();
  action = 0;
  phase: CheckoutView['phase'] = 'running';
  private readonly events: LabEvent[] = [];
  private readonly labels: string[] = [];
  private readonly notes: string[] = [];
  private charges: LedgerLine[] = [];
  private lastActivity = Date.now();

  constructor(
    readonly policy: Policy,
    private readonly lab: Lab,
    private readonly changed: () => void,
  ) {
    this.key = policy === 'propagated' ? randomUUID() : undefined;
  }

  /** An event of this checkout's lab; kept when it belongs to this checkout's time. */
  record(event: LabEvent): void {
    if ((event.startedAt ?? event.time) < this.startedAt) return;
    this.events.push(event);
    if (event.event === 'attempt') this.lastActivity = Date.now();
    this.changed();
  }

  note(text: string): void {
    this.notes.push(text);
    this.changed();
  }

  /**
   * Press once per label, all at once, then settle: every press answered,
   * `lateMs` (an attempt the faults hold back) and the write-up's margin past
   * the press, nothing new for a moment, and no service being started again.
   */
  async press(action: number, labels: string[], lateMs: number, restarts: () => Promise<void>): Promise<void> {
    this.action = action;
    this.phase = 'running';
    this.labels.push(...labels);
    this.changed();
    const pressedAt = Date.now();
    const polling = { on: true };
    const poll = this.pollLedger(polling);
    const caller = callerFor(this.lab, this.policy);
    try {
      await Promise.all(labels.map(() => press(caller, this.order, this.key)));
      this.phase = 'settling';
      this.changed();
      await this.settle(pressedAt + lateMs + SETUP.settleMarginMs, restarts);
    } finally {
      polling.on = false;
      await poll;
      await caller.close();
    }
    await this.readLedger();
    this.phase = 'settled';
    this.changed();
  }

  get chargeCount(): number {
    return this.charges.length;
  }

  view(): CheckoutView {
    return {
      action: this.action,
      title: `${this.policy}: ${this.order.orderId}`,
      policy: this.policy,
      phase: this.phase,
      answers: answersOf(this.events, this.labels),
      charges: this.charges,
      origin: this.startedAt,
      steps: sequenceSteps(this.events, this.charges, this.startedAt),
      notes: this.notes,
    };
  }

  private async settle(landAt: number, restarts: () => Promise<void>): Promise<void> {
    const bound = Date.now() + SETTLE_BOUND_MS;
    for (;;) {
      await restarts();
      const now = Date.now();
      if (now >= landAt && now - this.lastActivity >= QUIET_MS) return;
      if (now > bound) return this.note(`still busy ${SETTLE_BOUND_MS / 1000} s after the press: the count may still change`);
      await sleep(Math.max(50, landAt - now, QUIET_MS - (now - this.lastActivity)));
    }
  }

  private async pollLedger(polling: { on: boolean }): Promise<void> {
    while (polling.on) {
      await this.readLedger();
      await sleep(LEDGER_EVERY_MS);
    }
  }

  private async readLedger(): Promise<void> {
    try {
      const lines = await ledgerOf(this.lab, this.order.orderId);
      if (lines.length === this.charges.length) return;
      this.charges = lines;
      this.lastActivity = Date.now();
      this.changed();
    } catch {
      // Payments is not answering (killed by the crash fault, being started again): the next read will tell.
    }
  }
}
