/** Longest delay `setTimeout` honours (2^31 - 1 ms); a longer one fires after 1 ms. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * `value` when it is a wait a timer can keep: a finite number of ms above 0
 * and at most `MAX_TIMER_MS`. A longer `setTimeout` does not wait longer:
 * Node warns and fires it after 1 ms, so a wait past that bound would turn
 * into retries back to back.
 *
 * @throws RangeError naming the option otherwise, at construction, so a bad
 *   setting never surfaces as a retry storm in production.
 * @example
 * timerMs('backoff.maxMs', options.backoff?.maxMs ?? 2000);
 */
export function timerMs(option: string, value: number): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0 || value > MAX_TIMER_MS) {
    throw new RangeError(`${option} must be a finite number of ms > 0 and <= ${MAX_TIMER_MS} (Node's longest timer); got ${String(value)}`);
  }
  return value;
}
