import { MemberList, type Membership } from './member-list';
import { MAX_TIMER_MS } from './milliseconds';

/**
 * How one running execution may be ended on a shutdown that can wait no
 * longer (see `RunningExecutions.giveUp`): `completed` or `released` when
 * it ended there, `undefined` when it is left to its lease.
 */
export type GiveUp = () => Promise<'completed' | 'released' | undefined>;

/** What a shutdown that could wait no longer did with the executions still running (see `RunningExecutions.giveUp`). */
export interface GivenUp {
  /**
   * Completed as a 500 result-not-stored: their handlers had ended, and once
   * stored their work is not run again (a completion the store fails is
   * reported as a `store_error` event of its own, and leaves the key to its lease).
   */
  completed: number;
  /** Released: their handlers had thrown, so a retry runs them as usual. */
  released: number;
}

/**
 * The executions a coordinator has begun that have not yet stored their
 * answer or given their key back: what a graceful shutdown waits for
 * before it closes the store, and, for those an integration can end early
 * (an HTTP execution whose handler ended but whose answer is not whole),
 * how to end them when it can wait no longer. One registry per
 * coordinator, shared by everything that runs executions through it.
 *
 * A server that stops taking requests waits for the requests whose clients
 * are still connected; one whose client went away goes on running without
 * it, and its answer can be stored only while the store is open. Closed
 * under it, the completion fails, the key stays held until its lease ends,
 * and the retry after that runs the work again (unless the resource fences
 * on the epoch).
 */
export class RunningExecutions {
  private count = 0;
  private idle: Array<() => void> = [];
  /** The running executions an integration can end early, each with how. */
  private readonly endable = new MemberList<GiveUp>();

  /** Executions running now. */
  get size(): number {
    return this.count;
  }

  started(): void {
    this.count += 1;
  }

  ended(): void {
    this.count -= 1;
    if (this.count > 0) return;
    const idle = this.idle;
    this.idle = [];
    for (const resolve of idle) resolve();
  }

  /** Resolves `true` once none is running, or `false` when some still are after `timeoutMs`. */
  drained(timeoutMs: number): Promise<boolean> {
    if (this.count === 0) return Promise.resolve(true);
    return new Promise<boolean>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        resolve(true);
      };
      const timer = setTimeout(
        () => {
          this.idle = this.idle.filter((waiting) => waiting !== done);
          resolve(false);
        },
        Math.min(Number.isNaN(timeoutMs) ? 0 : Math.max(timeoutMs, 0), MAX_TIMER_MS),
      ); // Infinity: as long as a timer can wait
      this.idle.push(done);
    });
  }

  /**
   * A running execution can be ended early by `giveUp`, until it leaves
   * through the returned membership: once it has stored its answer or
   * given its key back, there is nothing left to end.
   */
  endableBy(giveUp: GiveUp): Membership<GiveUp> {
    return this.endable.add(giveUp);
  }

  /** End every execution that can be ended early, as it says (for a shutdown that can wait no longer). */
  async giveUp(): Promise<GivenUp> {
    const ends = await Promise.all(this.endable.values().map((giveUp) => giveUp()));
    return { completed: ends.filter((end) => end === 'completed').length, released: ends.filter((end) => end === 'released').length };
  }
}
