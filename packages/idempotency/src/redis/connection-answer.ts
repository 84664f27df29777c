import type { Cluster, Redis } from 'ioredis';
import { isCluster } from './redis-client';

/** ioredis's own `connectTimeout`, for a client that sets none. */
const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;

/**
 * Whether Redis has answered the client's connection since it was last
 * ready: with a failure (a login refused, unreachable, timed out). Not
 * before the first connection, and not again once a connection that was
 * ready is lost, until the next attempt is answered. Until then, a command
 * the client rejects as not connected (a lazy client, a pod's first
 * requests, a reconnect in progress) says nothing about Redis: a login
 * refused (a wrong password; a user disabled, or its password rotated,
 * while the connection was up) and an outage look the same, and an
 * operation that fails open would run its action unprotected until the
 * AUTH reply. The store waits for this answer before it calls such a
 * failure an outage. An attempt that fails for another reason answers
 * too: an outage costs one connection attempt, not every one.
 */
export class ConnectionAnswer {
  private answered = false;
  /** Whether a Sentinel list that named no error was passed over since the client was last ready. */
  private passedOver = false;
  private readonly waiting = new Set<() => void>();
  /** Longest a failure waits: the client's connect timeout (a connection that never answers fails by then), plus a second for the login's reply. */
  private readonly boundMs: number;

  constructor(private readonly client: Redis | Cluster) {
    const options = isCluster(client) ? client.options.redisOptions : client.options;
    this.boundMs = (options?.connectTimeout ?? DEFAULT_CONNECT_TIMEOUT_MS) + 1000;
  }

  /**
   * A connection failed (`failure`), or the store was closed: nothing waits
   * any more. Except once after the client was ready: ioredis starts a
   * reconnect through Sentinel where its list of sentinels ended, reports
   * them all unreachable before it asked any (naming no last error), and
   * starts over; that answers nothing yet.
   */
  readonly answer = (failure?: unknown): void => {
    if (!this.passedOver && failure instanceof Error && /^All sentinels are unreachable\b(?![\s\S]*\bLast error:)/.test(failure.message)) {
      this.passedOver = true;
      return;
    }
    this.answered = true;
    this.wake();
  };

  /**
   * The client is ready: what waits is answered, and should this connection
   * be lost, the next attempt is not answered yet. Listening for the loss
   * itself would come late: ioredis emits `close` a tick after the status
   * changed, and a command in between would read the drop as an outage.
   */
  readonly ready = (): void => {
    this.answered = false;
    this.passedOver = false;
    this.wake();
  };

  private wake(): void {
    for (const wake of this.waiting) wake();
    this.waiting.clear();
  }

  /**
   * Resolve once the connection was answered or ready (at once if it was),
   * starting it when a lazy client has not; after the client's connect
   * timeout and a second at the most.
   */
  async settled(): Promise<void> {
    if (this.answered) return;
    // A lazy client that rejected a command without connecting would never answer.
    if (this.client.status === 'wait') this.client.connect().catch(() => undefined);
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, this.boundMs);
      timer.unref();
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.waiting.add(done);
    });
  }
}
