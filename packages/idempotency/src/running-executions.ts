import { MAX_TIMER_MS } from './milliseconds';

/**
 * How many executions a coordinator has begun that have not yet stored
 * their answer or given their key back: what a graceful shutdown waits for
 * before it closes the store.
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
}
