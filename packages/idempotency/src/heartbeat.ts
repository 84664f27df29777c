import { MemberList, type Membership } from './member-list';

/** An execution the heartbeat renews: `beat()` starts one renewal of its lease. */
export interface Beating {
  /** When its last renewal started (or its claim), in `performance.now()` ms. */
  lastBeatAt: number;
  beat(): void;
}

/**
 * One timer for every live execution with the same heartbeat interval,
 * instead of a timer per execution: it ticks every half interval and starts
 * a renewal for each execution whose last one began half an interval ago or
 * more, so a lease is renewed no later than one interval after the last
 * renewal - as a timer of its own would - and an execution shorter than
 * half an interval, the common case, is never renewed at all. The timer
 * stops once a tick finds nobody left.
 */
class Heartbeat {
  private readonly members = new MemberList<Beating>();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly intervalMs: number) {}

  /** Renew `member`'s lease from now on, until it leaves through the returned membership. */
  add(member: Beating): Membership<Beating> {
    const membership = this.members.add(member);
    if (!this.timer) {
      this.timer = setInterval(() => this.tick(), this.intervalMs / 2);
      this.timer.unref();
    }
    return membership;
  }

  private tick(): void {
    if (this.members.size === 0) {
      clearInterval(this.timer);
      this.timer = undefined;
      return;
    }
    const due = performance.now() - this.intervalMs / 2;
    for (const member of this.members.values()) if (member.lastBeatAt <= due) member.beat();
  }
}

const heartbeats = new Map<number, Heartbeat>();

/** The heartbeat of every execution whose policy renews every `intervalMs`. */
export function heartbeat(intervalMs: number): Heartbeat {
  let shared = heartbeats.get(intervalMs);
  if (!shared) heartbeats.set(intervalMs, (shared = new Heartbeat(intervalMs)));
  return shared;
}
