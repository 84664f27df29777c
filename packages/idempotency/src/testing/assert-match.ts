import assert from 'node:assert/strict';

/**
 * Assert that `actual` has `expected`'s properties with equal values,
 * recursively through plain objects; other properties of `actual` are not
 * compared. A failure shows the diff of just those properties.
 */
export function assertMatch(actual: unknown, expected: object, message?: string): void {
  assert.deepEqual(pick(actual, expected), expected, message);
}

function pick(actual: unknown, expected: unknown): unknown {
  if (!isPlainObject(expected) || typeof actual !== 'object' || actual === null) return actual;
  const source = actual as Record<string, unknown>;
  return Object.fromEntries(
    Object.keys(expected)
      .filter((name) => name in source)
      .map((name) => [name, pick(source[name], expected[name])]),
  );
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === Object.prototype;
}
