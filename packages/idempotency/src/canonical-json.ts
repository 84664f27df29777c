import { types } from 'node:util';

/** Deepest nesting of arrays, objects, Maps, Sets and `toJSON` calls a canonical form is made of. */
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
 * Beyond JSON, it writes what a custom scalar or a message codec hands a
 * handler, in forms no JSON text has, so none can equal a JSON value's or
 * another type's: a `bigint` as its decimal digits and `n` (`-12n`); a
 * `Map` as `Map{key:value,...}`, its entries sorted by their key's form
 * (then their value's), so their order does not matter; a `Set` as
 * `Set[...]`, its elements sorted by their form. A key, value or element
 * that is `undefined` is written `undefined`, apart from `null`. A Map's
 * or a Set's own enumerable properties (a subclass's field) follow as an
 * object, `Map{...}{"currency":"EUR"}`, when it has any.
 *
 * Written here rather than taken from a package because the request body
 * is untrusted: a recursive canonicaliser overflows the stack on a body of
 * 20,000 nested arrays that is well under any size limit, and that must be
 * a 400, not a crash. The depth is bounded instead, in the same single pass;
 * a Map or a Set is a level as an array is, and so is a `toJSON` call.
 *
 * @throws TooDeepError beyond `maxDepth` levels of nesting.
 * @throws TypeError for what has no canonical form (a non-finite number, a function or a symbol in a list, a Proxy of a Map or a Set).
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
  // Digits then `n`: no JSON number has a letter in it, so no JSON value's form is a bigint's.
  if (typeof value === 'bigint') return `${value}n`;
  if (typeof value !== 'object') throw new TypeError(`a ${typeof value} has no JSON form`);
  if (depth === 0) throw new TooDeepError(`nested deeper than ${MAX_CANONICAL_DEPTH} levels`);
  const json = (value as { toJSON?: unknown }).toJSON;
  // A level of its own: a toJSON may return another object with a toJSON, and
  // such a chain must end in TooDeepError, not a stack overflow.
  if (typeof json === 'function') return write(json.call(value), depth - 1);
  if (value instanceof Map) return writeMap(iterableMap(value), depth - 1);
  if (value instanceof Set) return writeSet(iterableSet(value), depth - 1);
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) out += (i > 0 ? ',' : '') + write(value[i] ?? null, depth - 1);
    return `${out}]`;
  }
  return writeObject(value as Record<string, unknown>, depth - 1);
}

/** `{...}`: the object's own enumerable members, sorted, each written at `depth` (the level inside the object). */
function writeObject(record: Record<string, unknown>, depth: number): string {
  let out = '{';
  for (const name of sortedKeys(record)) {
    const member = record[name];
    if (member === undefined || typeof member === 'function' || typeof member === 'symbol') continue;
    out += `${out.length > 1 ? ',' : ''}${JSON.stringify(name)}:${write(member, depth)}`;
  }
  return `${out}}`;
}

/**
 * A Map's or a Set's own enumerable properties (a subclass's field, an
 * expando) are part of the value, as an object's members are: written as
 * an object right after the entries, at the same level, and only when
 * there are some, so a plain Map or Set keeps the form it always had. No
 * other form follows a Map's or a Set's with `{`, so it cannot be read two ways.
 */
function ownProperties(collection: object, depth: number): string {
  if (Object.keys(collection).length === 0) return '';
  const written = writeObject(collection as Record<string, unknown>, depth);
  return written === '{}' ? '' : written;
}

/**
 * `Map{key:value,...}`, then its own properties if it has any
 * (`Map{...}{"currency":"EUR"}`): no JSON value starts with `M`, so a Map's form is
 * neither an object's nor an array's (nor a Set's). Its entries are sorted
 * by the key's form, then the value's: two keys can have one form (two
 * equal objects), and their order must not be left to insertion. A reader
 * of a form knows where it ends, so the `:` and `,` between forms cannot
 * be read two ways.
 */
function writeMap(map: ReadonlyMap<unknown, unknown>, depth: number): string {
  const entries: Array<[string, string]> = [];
  for (const [key, member] of map) entries.push([writeMember(key, depth), writeMember(member, depth)]);
  entries.sort(([keyA, valueA], [keyB, valueB]) => compare(keyA, keyB) || compare(valueA, valueB));
  let out = 'Map{';
  for (let i = 0; i < entries.length; i++) {
    const [key, member] = entries[i] as [string, string];
    out += `${i > 0 ? ',' : ''}${key}:${member}`;
  }
  return `${out}}${ownProperties(map, depth)}`;
}

/** `Set[...]`, its elements sorted by their form (their order of insertion does not matter), then its own properties if it has any. */
function writeSet(set: ReadonlySet<unknown>, depth: number): string {
  const elements: string[] = [];
  for (const element of set) elements.push(writeMember(element, depth));
  return `Set[${elements.sort().join(',')}]${ownProperties(set, depth)}`;
}

/**
 * The Map itself, when its entries can be read. A Proxy of a Map (as
 * reactive state libraries hand out) passes `instanceof Map` but has no
 * entries of its own to read: Map's methods throw on it. Its contents
 * cannot be known, so it has no canonical form, and it is refused as a
 * function is, in words of this library rather than the engine's.
 *
 * @throws TypeError when `map` is not a Map the engine can read (a Proxy of one, an object made from Map's prototype).
 */
export function iterableMap<K, V>(map: ReadonlyMap<K, V>): ReadonlyMap<K, V> {
  if (!types.isMap(map)) throw new TypeError('a Map that cannot be iterated (such as a Proxy of a Map) has no canonical form');
  return map;
}

/** As {@link iterableMap}, for a Set. */
function iterableSet<T>(set: ReadonlySet<T>): ReadonlySet<T> {
  if (!types.isSet(set)) throw new TypeError('a Set that cannot be iterated (such as a Proxy of a Set) has no canonical form');
  return set;
}

/** A Map's key or value, a Set's element: present even when `undefined`, so written, and apart from `null`. */
function writeMember(value: unknown, depth: number): string {
  return value === undefined ? 'undefined' : write(value, depth);
}

/** UTF-16 code unit order, as `Array#sort` orders strings. */
function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
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
