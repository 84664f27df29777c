import type { Cluster, Redis } from 'ioredis';

/**
 * How long a command that failed before the client's first connection was
 * answered waits for that answer: ioredis's default `connectTimeout` (a
 * connection that never answers fails by then), plus a second for the
 * login's reply.
 */
const FIRST_ANSWER_MS = 11_000;

/**
 * Whether Redis has answered the client's first connection yet: ready, or
 * failed (refused, unreachable, timed out). Until then a command the client
 * rejects as not connected (a lazy client, a pod's first requests) says
 * nothing about Redis: a wrong password and an outage look the same, and an
 * operation that fails open would run its action unprotected on every pod
 * with a wrong password until the first AUTH reply. The store waits for
 * this answer before it calls such a failure an outage. Only the first
 * connection: once answered, the store knows the last refusal it heard.
 */
export class FirstAnswer {
  private answered = false;
  private readonly waiting = new Set<() => void>();

  constructor(private readonly client: Redis | Cluster) {}

  /** The client was ready, failed, or was closed: nothing waits any more. */
  readonly answer = (): void => {
    this.answered = true;
    for (const wake of this.waiting) wake();
    this.waiting.clear();
  };

  /**
   * Resolve once the first connection was answered (at once if it was),
   * starting it when a lazy client has not; after `FIRST_ANSWER_MS` at
   * the most.
   */
  async settled(): Promise<void> {
    if (this.answered) return;
    // A lazy client that rejected a command without connecting would never answer.
    if (this.client.status === 'wait') this.client.connect().catch(() => undefined);
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, FIRST_ANSWER_MS);
      timer.unref();
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.waiting.add(done);
    });
  }
}
