import { HttpException, Injectable, Logger, ServiceUnavailableException } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * The faults the lab can inject into a service it runs, armed over
 * `PUT /lab/faults` (loopback only). A service started on its own has no
 * way to arm any of them: the endpoint, the interceptors and the ledger's
 * fault points exist only in the lab's overlay.
 */
export interface FaultPlan {
  /** Delay the answer to a first attempt by this much, after the side effect (payments). */
  slowFirstAttemptMs?: number;
  /** Drop this many replies after the work is done: the caller sees the connection close. */
  loseReplies?: number;
  /** Kill the process (SIGKILL) right after the side effect, this many times. */
  crashAfterSideEffect?: number;
  /** Stall a first attempt this long before the side effect (a holder outliving its lease). */
  stallBeforeSideEffectMs?: number;
  /** Fail this many requests with 503 before the side effect (a transient failure). */
  failBeforeSideEffect?: number;
  /** Decline this many payments with 402 before the side effect (a final answer). */
  declineBeforeSideEffect?: number;
  /** Delay this many answers to a first attempt by `slowReplyMs`, after the work is done (any hop): its caller gives up and retries. */
  slowFirstReplies?: number;
  /** How late a slow first reply is answered (default 1000 ms). */
  slowReplyMs?: number;
  /**
   * Freeze the whole process this many times, for `stallHolderMs`, just
   * before the side effect: the holder's heartbeat is frozen with it, so its
   * lease runs out under it (a long GC pause, a stopped VM), and it then
   * carries on with its write as if nothing happened.
   */
  stallHolders?: number;
  /** How long a stalled holder freezes its process (default 3000 ms). */
  stallHolderMs?: number;
}

/** The faults armed as a count, consumed one per injection. */
const COUNTED = [
  'loseReplies',
  'crashAfterSideEffect',
  'failBeforeSideEffect',
  'declineBeforeSideEffect',
  'slowFirstReplies',
  'stallHolders',
] as const;
type CountedFault = (typeof COUNTED)[number];

/** Block this thread for `ms`: no timer, no I/O, no heartbeat runs meanwhile (and no CPU is burnt). */
function freeze(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * The armed plan, consumed by the fault points. With nothing armed every
 * method returns at once. Each fault injected is logged
 * (`{ event: 'fault', fault }`), so whoever reads the logs counts the faults
 * that happened, not the ones armed.
 */
@Injectable()
export class LabFaults {
  private plan: FaultPlan = {};
  /** Nest's logger, which the app's `main` hands to its pino logger: the line is the app's JSON, with `context: 'LabFaults'`. */
  private readonly logger = new Logger(LabFaults.name);

  /** Replace the armed plan (`PUT /lab/faults`). */
  arm(plan: FaultPlan): void {
    this.plan = { ...plan };
  }

  /** Add to the armed plan (`PATCH /lab/faults`): counts add up, durations are replaced. */
  add(plan: FaultPlan): void {
    const counts = Object.fromEntries(
      COUNTED.filter((fault) => plan[fault] !== undefined).map((fault) => [fault, (this.plan[fault] ?? 0) + (plan[fault] ?? 0)]),
    );
    this.plan = { ...this.plan, ...plan, ...counts };
  }

  /** What is armed now, counted faults already consumed. */
  armed(): FaultPlan {
    return { ...this.plan };
  }

  /** Called before the side effect, with the attempt being handled. */
  async beforeSideEffect(attempt: number): Promise<void> {
    if (attempt === 1 && this.plan.stallBeforeSideEffectMs) await sleep(this.plan.stallBeforeSideEffectMs);
    if (this.take('stallHolders')) freeze(this.plan.stallHolderMs ?? 3000);
    if (this.take('failBeforeSideEffect')) throw new ServiceUnavailableException('Lab fault: transient failure before the charge');
    if (this.take('declineBeforeSideEffect')) throw new HttpException('Lab fault: the card was declined', 402);
  }

  /** Called between the side effect and the answer (the record is not completed yet). */
  async afterSideEffect(attempt: number): Promise<void> {
    if (this.take('crashAfterSideEffect')) process.kill(process.pid, 'SIGKILL');
    if (attempt === 1 && this.plan.slowFirstAttemptMs) await sleep(this.plan.slowFirstAttemptMs);
  }

  /** True when this reply is to be dropped (consumes one). */
  takeLostReply(): boolean {
    return this.take('loseReplies');
  }

  /** How long to hold back the answer to `attempt`: 0, or `slowReplyMs` for a first attempt while slow replies are armed (consumes one). */
  takeSlowReply(attempt: number): number {
    return attempt === 1 && this.take('slowFirstReplies') ? (this.plan.slowReplyMs ?? 1000) : 0;
  }

  /** Consume one of a counted fault, and log it; true when one was armed. */
  private take(fault: CountedFault): boolean {
    const left = this.plan[fault] ?? 0;
    if (left <= 0) return false;
    this.plan[fault] = left - 1;
    // Logged before it acts: a crash ends the process, and pino writes to stdout synchronously.
    this.logger.log({ event: 'fault', fault }, `lab fault: ${fault}`);
    return true;
  }
}
