/**
 * The whole run's time limit, and its stop button. Each part has a timeout of its own (a press, a settle,
 * a count, a service's start), but they add up: twelve scenarios each waiting out a
 * minute hold a CI job for a quarter of an hour. Past the deadline, or once `stop`
 * aborts (the verifier got SIGINT or SIGTERM), the run stops with what it was doing,
 * and its signal tells what is still running to stop too.
 */
export class Deadline {
  private readonly controller = new AbortController();
  /** What the run is doing, for the error: e.g. `in scenario kill; 3 of 11 scenarios finished`. */
  doing = 'while starting the proxies and services';

  constructor(
    private readonly ms: number,
    private readonly stop?: AbortSignal,
  ) {}

  /** Aborted once the deadline passed. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Runs `work`; rejects when the deadline passes first, and aborts {@link Deadline.signal}. */
  async race<T>(work: () => Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    let onStop: (() => void) | undefined;
    const passed = new Promise<never>((_, reject) => {
      const end = (why: string) => {
        const error = new Error(`${why} ${this.doing}`);
        this.controller.abort(error);
        reject(error);
      };
      timer = setTimeout(() => end(`the run passed its deadline (deadlineMs ${this.ms})`), this.ms);
      onStop = () => end(reason(this.stop?.reason));
      if (this.stop?.aborted) onStop();
      else this.stop?.addEventListener('abort', onStop, { once: true });
    });
    const running = work();
    // Abandoned at the deadline, the work fails on the aborted signal: that is no news.
    running.catch(() => undefined);
    try {
      return await Promise.race([running, passed]);
    } finally {
      clearTimeout(timer);
      if (onStop) this.stop?.removeEventListener('abort', onStop);
    }
  }
}

function reason(why: unknown): string {
  return why instanceof Error ? why.message : String(why ?? 'stopped');
}
