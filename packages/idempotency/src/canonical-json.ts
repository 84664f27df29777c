/** Deepest nesting of arrays and objects a canonical form is made of. */
export const MAX_CANONICAL_DEPTH = 64;

/** A value nested deeper than {@link MAX_CANONICAL_DEPTH}. */
export class TooDeepError extends RangeError {
  override name = 'TooDeepError';
}

/**
 * RFC 8785 (JCS) canonical JSON of a parsed JSON value: object members
 * sorted by their UTF-16 code units, numbers and strings in ECMAScript's
 * own serialisation (which is what JCS specifies), no whitespace.
 *
 * Written here rather than taken from a package because the request body
 * is untrusted: a recursive canonicaliser overflows the stack on a body of
 * 20,000 nested arrays that is well under any size limit, and that must be
 * a 400, not a crash. The depth is bounded instead, in the same single pass.
 *
 * @throws TooDeepError beyond `maxDepth` levels of nesting.
 * @throws TypeError for what JSON cannot hold (a non-finite number, a BigInt).
 */
export function canonicalJson(value: unknown, maxDepth = MAX_CANONICAL_DEPTH): string {
  return write(value, maxDepth);
}

function write(value: unknown, depth: number): string {
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new TypeError(`${value} has no JSON form`);
    return JSON.stringify(value);
  }
  if (typeof value !== 'object') throw new TypeError(`a ${typeof value} has no JSON form`);
  if (depth === 0) throw new TooDeepError(`nested deeper than ${MAX_CANONICAL_DEPTH} levels`);
  const json = (value as { toJSON?: unknown }).toJSON;
  if (typeof json === 'function') return write(json.call(value), depth);
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) out += (i > 0 ? ',' : '') + write(value[i] ?? null, depth - 1);
    return `${out}]`;
  }
  const record = value as Record<string, unknown>;
  let out = '{';
  for (const name of sortedKeys(record)) {
    const member = record[name];
    if (member === undefined || typeof member === 'function' || typeof member === 'symbol') continue;
    out += `${out.length > 1 ? ',' : ''}${JSON.stringify(name)}:${write(member, depth - 1)}`;
  }
  return `${out}}`;
}

/** Up to this many members, keys are sorted by insertion (see `sortedKeys`). */
const INSERTION_SORT_MAX = 16;

/**
 * The object's own keys in UTF-16 code unit order, as `Array#sort` orders
 * strings. A request's objects mostly have a handful of members: those are
 * sorted in place by insertion, which allocates nothing more, while `sort()`
 * builds a work copy of its own on every call. A larger object (an untrusted
 * body may have thousands) goes to `sort()`, whose time stays n log n.
 */
function sortedKeys(record: Record<string, unknown>): string[] {
  const keys = Object.keys(record);
  if (keys.length > INSERTION_SORT_MAX) return keys.sort();
  for (let i = 1; i < keys.length; i++) {
    const key = keys[i] as string;
    let j = i - 1;
    for (; j >= 0 && (keys[j] as string) > key; j--) keys[j + 1] = keys[j] as string;
    keys[j + 1] = key;
  }
  return keys;
}
