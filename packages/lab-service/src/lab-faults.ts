import { Injectable } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * The faults the lab can inject. A service started without `LAB_FAULTS=1`
 * has no way to arm any of them: the endpoint that does is not registered
 * and the interceptor that drops replies is not installed.
 */
export interface FaultPlan {
  /** Delay the answer to a first attempt by this much, after the side effect (payments). */
  slowFirstAttemptMs?: number;
  /** Drop this many replies after the work is done: the caller sees the connection close. */
  loseReplies?: number;
  /** Kill the process (SIGKILL) right after the side effect, this many times. */
  crashAfterSideEffect?: number;
}

/**
 * The fault points a service passes through. With nothing armed (always the
 * case outside the lab) every method returns at once.
 */
@Injectable()
export class LabFaults {
  private plan: FaultPlan = {};

  /** Replace the armed plan (lab only: called by the lab endpoint). */
  arm(plan: FaultPlan): void {
    this.plan = { ...plan };
  }

  armed(): FaultPlan {
    return { ...this.plan };
  }

  /** Called between the side effect and the answer. */
  async afterSideEffect(attempt: number): Promise<void> {
    if ((this.plan.crashAfterSideEffect ?? 0) > 0) {
      this.plan.crashAfterSideEffect = (this.plan.crashAfterSideEffect ?? 1) - 1;
      process.kill(process.pid, 'SIGKILL');
    }
    if (attempt === 1 && this.plan.slowFirstAttemptMs) await sleep(this.plan.slowFirstAttemptMs);
  }

  /** True when this reply is to be dropped (consumes one). */
  takeLostReply(): boolean {
    if (!this.plan.loseReplies) return false;
    this.plan.loseReplies -= 1;
    return true;
  }
}
