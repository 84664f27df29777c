/**
 * Small helpers for tests that coordinate concurrent work by events, not by
 * sleeping. Every wait is bounded, so a broken store fails a test instead of
 * hanging it; the bounds are generous because they guard against hangs, not
 * measure speed.
 */

/** A promise the test opens (or fails) from outside: it holds an action in place. */
export interface Latch<T = void> {
  readonly promise: Promise<T>;
  open(value: T): void;
  fail(error: unknown): void;
}

export function latch<T = void>(): Latch<T> {
  let open!: (value: T) => void;
  let fail!: (error: unknown) => void;
  const promise = new Promise<T>((resolve, reject) => {
    open = resolve;
    fail = reject;
  });
  return { promise, open, fail };
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Poll `check` until it holds, for conditions that have no event to await. */
export async function eventually(
  check: () => boolean | Promise<boolean>,
  what: string,
  { timeoutMs = 10_000, intervalMs = 20 }: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(intervalMs);
  }
}

/** Settle as `promise` does, or reject if it has not settled after `ms`. */
export function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const safety = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: still pending after ${ms} ms`)), ms);
  });
  return Promise.race([promise, safety]).finally(() => clearTimeout(timer));
}

/** Whether a promise has settled, readable without awaiting it. */
export function track<T>(promise: Promise<T>): { readonly settled: boolean; readonly promise: Promise<T> } {
  const state = { settled: false, promise };
  promise.then(
    () => (state.settled = true),
    () => (state.settled = true),
  );
  return state;
}
