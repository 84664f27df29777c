import { MAX_TIMER_MS } from './milliseconds';

/** How a shared store learns that one record may have left `in_progress`. */
export interface CompletionSignal {
  /**
   * Start listening; resolves once the subscription is in force. Call
   * `wake()` when the record may have changed: on its completion signal,
   * or when the signal may have been missed (its connection was lost).
   */
  join(wake: () => void): Promise<void>;
  leave(wake: () => void): void;
  /** Read the record (and ask for its completion signal): true while it is still in progress. */
  inProgress(): Promise<boolean>;
}

type Settle = (error?: unknown) => void;

/** One record's wait, shared by every caller of this process that waits on it. */
interface Watch {
  readonly callers: Set<Settle>;
  /** Settle every caller, with `error` when the store failed, and stop listening. */
  end(error?: unknown): void;
}

/**
 * The waits of a shared store (`IdempotencyStore.waitForChange`). All the
 * callers waiting on one record share one watch: one subscription, one
 * read (which may mark the record), one safety poll. A thousand duplicates
 * of one request cost the store what one does.
 *
 * A watch subscribes first, then reads the record once - a completion lands
 * before the read (seen) or after it (signalled), never in between - and
 * re-reads it every `pollIntervalMs` only as a safety net. It ends, for
 * all its callers, on the signal or when a read finds the record no longer
 * in progress; it rejects them all when the store fails. Each caller leaves
 * on its own timeout or abort; the last one out stops the watch.
 */
export class SignalledWaits {
  private readonly watches = new Map<string, Watch>();

  constructor(private readonly pollIntervalMs: number) {}

  /**
   * Resolve when the record at `key` may have changed, after `timeoutMs`,
   * or on `abort`; reject when the store fails. `signal` is called only
   * when no caller waits on `key` yet.
   */
  wait(key: string, signal: () => CompletionSignal, timeoutMs: number, abort?: AbortSignal): Promise<void> {
    if (abort?.aborted || !(timeoutMs > 0)) return Promise.resolve();
    const watch = this.watches.get(key) ?? this.watch(key, signal());
    return new Promise<void>((resolve, reject) => {
      const settle: Settle = (error) => {
        if (!watch.callers.delete(settle)) return;
        clearTimeout(deadline);
        abort?.removeEventListener('abort', leave);
        if (error === undefined) resolve();
        else reject(error);
      };
      const leave = (): void => {
        settle();
        if (watch.callers.size === 0) watch.end();
      };
      const deadline = setTimeout(leave, Math.min(timeoutMs, MAX_TIMER_MS));
      abort?.addEventListener('abort', leave, { once: true });
      watch.callers.add(settle);
    });
  }

  /** Resolve every pending wait (the store is closing). */
  close(): void {
    for (const watch of [...this.watches.values()]) watch.end();
  }

  private watch(key: string, signal: CompletionSignal): Watch {
    let poll: NodeJS.Timeout | undefined;
    let ended = false;
    const watch: Watch = {
      callers: new Set(),
      end: (error) => {
        if (ended) return;
        ended = true;
        this.watches.delete(key);
        clearTimeout(poll);
        signal.leave(wake);
        for (const settle of [...watch.callers]) settle(error);
      },
    };
    const wake = (): void => watch.end();
    const recheck = async (): Promise<void> => {
      if (ended) return;
      if (!(await signal.inProgress())) return watch.end();
      if (!ended) poll = setTimeout(() => void recheck().catch(watch.end), this.pollIntervalMs);
    };
    this.watches.set(key, watch);
    signal.join(wake).then(recheck).catch(watch.end);
    return watch;
  }
}
