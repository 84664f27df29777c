/** Longest delay `setTimeout` honours; a longer one fires at once. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * A store's duration argument, checked: a lease or retention that is not a
 * positive number would expire a record at once and let a duplicate run.
 */
export function positiveMs(name: string, value: number): number {
  if (!Number.isFinite(value) || value <= 0) throw new RangeError(`${name} must be a positive number of milliseconds`);
  return Math.ceil(value);
}
