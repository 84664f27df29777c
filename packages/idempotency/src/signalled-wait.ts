import { MAX_TIMER_MS } from './milliseconds';

/** How a shared store learns that a record may have left `in_progress`. */
export interface CompletionSignal {
  /** Start listening; resolves once the subscription is in force. */
  /** Call `wake()` on a completion signal, or `wake(error)` once the signal is lost (its connection closed). */
  join(wake: (lost?: Error) => void): Promise<void>;
  leave(wake: (lost?: Error) => void): void;
  /** Read the record: true while it is still in progress. */
  inProgress(): Promise<boolean>;
}

/**
 * The wait of a shared store (`IdempotencyStore.waitForChange`): subscribe
 * first, then read the record once - a completion lands before the read
 * (seen) or after it (signalled), never in between - and re-read every
 * `pollIntervalMs` only as a safety net. Resolves on the signal, the timeout
 * or the abort; rejects when the store fails. `waiters` holds every pending
 * wait, so the store's `close()` can settle them all.
 */
export function signalledWait(
  signal: CompletionSignal,
  options: { timeoutMs: number; pollIntervalMs: number; abort?: AbortSignal; waiters: Set<(error?: unknown) => void> },
): Promise<void> {
  const { timeoutMs, pollIntervalMs, abort, waiters } = options;
  if (abort?.aborted || !(timeoutMs > 0)) return Promise.resolve();
  return new Promise<void>((resolve, reject) => {
    let poll: NodeJS.Timeout | undefined;
    const settle = (error?: unknown): void => {
      if (!waiters.delete(settle)) return;
      clearTimeout(deadline);
      clearTimeout(poll);
      abort?.removeEventListener('abort', onAbort);
      signal.leave(onWake);
      if (error === undefined) resolve();
      else reject(error);
    };
    // A lost signal rejects: nothing can wake this wait, and the store is likely down.
    const onWake = (lost?: Error): void => settle(lost);
    const onAbort = (): void => settle();
    const recheck = async (): Promise<void> => {
      if (!waiters.has(settle)) return;
      if (!(await signal.inProgress())) return settle();
      if (waiters.has(settle)) poll = setTimeout(() => recheck().catch(settle), pollIntervalMs);
    };
    const deadline = setTimeout(onAbort, Math.min(timeoutMs, MAX_TIMER_MS));
    waiters.add(settle);
    abort?.addEventListener('abort', onAbort, { once: true });
    signal.join(onWake).then(recheck).catch(settle);
  });
}
