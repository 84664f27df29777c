import {
  callerText,
  EXPECTED_CHARGES,
  laterText,
  POLICIES,
  runWriteUp,
  sequenceSteps,
  type LabEvent,
  type LedgerLine,
  type Policy,
  type StoreChoice,
} from '@idempotency-chain/scenarios';
import { answersOf } from './answers';
import type { CheckoutView, WriteUpRow, WriteUpView } from './snapshot';

/** The two presses of each policy's run. */
const LABELS = ['Pay', 'Press again, once all has settled'];

/** The policy being played: its timeline as it is recorded, its ledger once the run has read it. */
interface LiveRun {
  action: number;
  policy: Policy;
  events: LabEvent[];
  charges: LedgerLine[];
  done: boolean;
}

/**
 * The write-up, played from the console: `runWriteUp` for each policy in
 * turn, exactly as `npm run scenarios` runs it (a fresh lab per policy, on the
 * runner's store), its timeline shown live, each row of the table added as
 * its run ends.
 */
export class WriteUpPlay {
  private readonly rows: WriteUpRow[] = [];
  private phase: WriteUpView['phase'] = 'running';
  private error?: string;
  private live?: LiveRun;

  constructor(
    private readonly store: StoreChoice,
    private readonly nextAction: () => number,
    private readonly changed: () => void,
  ) {}

  async play(): Promise<void> {
    try {
      for (const policy of POLICIES) {
        const live: LiveRun = { action: this.nextAction(), policy, events: [], charges: [], done: false };
        this.live = live;
        this.changed();
        const run = await runWriteUp(policy, this.store.store, this.store.redisUrl, (event) => {
          live.events.push(event);
          this.changed();
        });
        live.charges = run.ledger;
        live.done = true;
        this.rows.push({
          policy,
          charges: run.charges,
          expected: EXPECTED_CHARGES[policy],
          caller: callerText(run),
          later: laterText(run),
        });
        this.changed();
      }
      this.phase = 'done';
    } catch (error) {
      this.phase = 'failed';
      this.error = (error as Error).message;
      throw error;
    } finally {
      this.changed();
    }
  }

  table(): WriteUpView {
    return {
      phase: this.phase,
      rows: this.rows,
      ...(this.live && !this.live.done && { policy: this.live.policy }),
      ...(this.error && { error: this.error }),
    };
  }

  /** The run being played (or the last one), drawn like a checkout. */
  view(): CheckoutView | undefined {
    const live = this.live;
    if (!live) return undefined;
    const attempts = live.events.filter((e) => e.event === 'attempt').map((e) => e.startedAt ?? e.time);
    const origin = attempts.length > 0 ? Math.min(...attempts) : Date.now();
    const calls = live.events.filter((e) => e.event === 'attempt' && e.service === 'caller').length;
    return {
      action: live.action,
      title: `write-up, ${live.policy}`,
      policy: live.policy,
      phase: live.done ? 'settled' : this.phase === 'failed' ? 'failed' : 'running',
      answers: answersOf(live.events, LABELS.slice(0, Math.max(1, calls))),
      charges: live.charges,
      origin,
      steps: sequenceSteps(live.events, live.charges, origin),
      notes: live.done ? [] : ['The write-up reads the ledger once its run has settled: the count appears then.'],
    };
  }
}
