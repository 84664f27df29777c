import { MAX_TIMER_MS } from './milliseconds';
import type { ClaimResult } from './store';

/**
 * How one request's wait on a held key ended.
 *
 * - `own`: its own timeout or abort ended it; it goes on alone.
 * - `lead`: the record may have changed (its completion signal, or the
 *   holder's lease may have run out): this request claims for every waiter
 *   of the key, and hands them the answer with `share` as soon as the claim
 *   is sent.
 * - `follow`: another waiter claimed: its answer, as this request's own
 *   claim would have found the record.
 */
export type Recheck =
  | { readonly by: 'own' }
  | { readonly by: 'lead'; share(answer: Promise<ClaimResult>): void }
  | { readonly by: 'follow'; readonly answer: Promise<ClaimResult> };

/** Waits for the record at `recordKey` to change, until `timeoutMs` or `signal` (`IdempotencyStore.waitForChange`). */
export type WaitForChange = (recordKey: string, timeoutMs: number, signal: AbortSignal) => Promise<void>;

interface Waiter {
  end(recheck: Recheck): void;
  fail(error: unknown): void;
}

/** The waiters of one key: one store wait, one lease timer. */
interface Group {
  readonly waiters: Set<Waiter>;
  /** When the holder's lease may run out, as the latest claim found it (epoch ms). */
  leaseEndsAt: number;
  arm(leaseEndsAt: number): void;
  /** Stop waiting: the last waiter left. */
  stop(): void;
}

const NO_ONE_FOLLOWS = (): void => undefined;

/**
 * The waits of one coordinator's requests on keys other executions hold.
 * All the waiters of one key for one request (one fingerprint) share one
 * store wait (one subscription) and one lease timer, and when either ends,
 * one of them claims again for all:
 * a thousand duplicates on a key held under a 3 s lease cost the store one
 * claim per lease, not one per waiter per lease (about 400 a second).
 *
 * Each waiter still leaves on its own timeout or abort; the last one out
 * stops the group's store wait and timer. Exactly one waiter of a group,
 * the longest waiting, leads a re-check; the store's atomic claim lets at
 * most one claimant take over a key whose holder's lease ran out.
 *
 * Waiters for another fingerprint wait apart, though the key is the same:
 * a claim's answer holds for its own request only. The holder may change
 * between two waiters' claims (one for X expires, one for Z takes the key),
 * and a store answers X's claim on Z's record with what it keeps of Z's
 * fingerprint, never Z's answer: shared with a retry of Z's request, that
 * answer would refuse it (422) where its own claim replays.
 */
export class SharedRechecks {
  private readonly groups = new Map<string, Group>();

  constructor(private readonly waitForChange: WaitForChange) {}

  /**
   * Wait on `recordKey`, held for `leaseRemainingMs` more as a claim for
   * `fingerprint` just found it, for at most `timeoutMs`, or until `abort`.
   * Rejects when the store's wait fails.
   */
  wait(recordKey: string, fingerprint: string, leaseRemainingMs: number, timeoutMs: number, abort?: AbortSignal): Promise<Recheck> {
    if (abort?.aborted || !(timeoutMs > 0)) return Promise.resolve({ by: 'own' });
    // The lease bound re-checks a holder that died silently; 5 ms past it, so the lease has surely ended.
    const leaseEndsAt = Date.now() + leaseRemainingMs + 5;
    // The record key's length first, so no two pairs make the same name.
    const name = `${recordKey.length}:${recordKey}${fingerprint}`;
    const group = this.groups.get(name) ?? this.start(name, recordKey, leaseEndsAt);
    // A waiter that found an earlier end (another holder, a shorter lease) must not wait for a later one.
    if (leaseEndsAt < group.leaseEndsAt) group.arm(leaseEndsAt);
    return new Promise<Recheck>((resolve, reject) => {
      const settle = (): boolean => {
        if (!group.waiters.delete(waiter)) return false;
        clearTimeout(deadline);
        abort?.removeEventListener('abort', leave);
        return true;
      };
      const waiter: Waiter = {
        end: (recheck) => settle() && resolve(recheck),
        fail: (error) => settle() && reject(error),
      };
      const leave = (): void => {
        waiter.end({ by: 'own' });
        if (group.waiters.size === 0) group.stop();
      };
      const deadline = setTimeout(leave, Math.min(timeoutMs, MAX_TIMER_MS));
      abort?.addEventListener('abort', leave, { once: true });
      group.waiters.add(waiter);
    });
  }

  private start(name: string, recordKey: string, leaseEndsAt: number): Group {
    const stopping = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    let ended = false;
    const end = (): boolean => {
      if (ended) return false;
      ended = true;
      this.groups.delete(name);
      clearTimeout(timer);
      stopping.abort();
      return true;
    };
    const group: Group = {
      waiters: new Set(),
      leaseEndsAt,
      arm: (at) => {
        group.leaseEndsAt = at;
        clearTimeout(timer);
        timer = setTimeout(recheck, Math.min(Math.max(at - Date.now(), 0), MAX_TIMER_MS));
      },
      stop: end,
    };
    // The waiters that follow stay in the group's set until the lead shares its answer: each may still leave on its own.
    const recheck = (): void => {
      if (!end()) return;
      const [lead, ...followers] = group.waiters;
      const share = (answer: Promise<ClaimResult>): void => {
        answer.catch(NO_ONE_FOLLOWS); // each follower handles a failed claim as its own
        for (const follower of followers) follower.end({ by: 'follow', answer });
      };
      lead?.end({ by: 'lead', share });
    };
    const fail = (error: unknown): void => {
      if (!end()) return;
      for (const waiter of [...group.waiters]) waiter.fail(error);
    };
    this.groups.set(name, group);
    group.arm(leaseEndsAt);
    // The store's own timeout is not used: the group's lease timer may move earlier. `stop` aborts this wait.
    // Called from a promise, so a store that throws instead of rejecting fails the group's waiters too.
    Promise.resolve()
      .then(() => this.waitForChange(recordKey, MAX_TIMER_MS, stopping.signal))
      .then(recheck, fail);
    return group;
  }
}
