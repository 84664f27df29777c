import { HttpException, Injectable, ServiceUnavailableException } from '@nestjs/common';
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
}

/** The armed plan, consumed by the fault points. With nothing armed every method returns at once. */
@Injectable()
export class LabFaults {
  private plan: FaultPlan = {};

  /** Replace the armed plan (the lab endpoint does). */
  arm(plan: FaultPlan): void {
    this.plan = { ...plan };
  }

  /** What is armed now, counted faults already consumed. */
  armed(): FaultPlan {
    return { ...this.plan };
  }

  /** Called before the side effect, with the attempt being handled. */
  async beforeSideEffect(attempt: number): Promise<void> {
    if (attempt === 1 && this.plan.stallBeforeSideEffectMs) await sleep(this.plan.stallBeforeSideEffectMs);
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

  /** Consume one of a counted fault; true when one was armed. */
  private take(fault: 'loseReplies' | 'crashAfterSideEffect' | 'failBeforeSideEffect' | 'declineBeforeSideEffect'): boolean {
    const left = this.plan[fault] ?? 0;
    if (left <= 0) return false;
    this.plan[fault] = left - 1;
    return true;
  }
}
