/**
 * The parts of a graphql-js output type this module reads (structural:
 * `graphql` stays optional for apps without it). A list or non-null
 * wrapper has `ofType`; an object or interface type has `getFields()`.
 */
export interface OutputTypeLike {
  readonly ofType?: OutputTypeLike;
  getFields?(): Record<string, { readonly type: OutputTypeLike }>;
}

/** Deeper than this, a value is kept as it is (a cycle then makes it unstorable, as JSON would). */
const MAX_DEPTH = 64;

/**
 * What a mutation returned, as GraphQL reads it through its declared type:
 * a plain copy in which every field the type declares and the value holds
 * is an own property, read once — a getter of an entity class, a virtual,
 * a prototype's property — next to the value's own enumerable properties.
 * `JSON.stringify` keeps only the latter, so a replay would lose a computed
 * field the first answer had, and a non-null one would turn the retry into
 * an error that invites a retry under a new key. A field with a resolver
 * of its own (`@ResolveField`) runs again on a replay, whatever is stored
 * for it. A field the value holds as a function, or whose getter throws, is
 * left out: GraphQL's default resolver calls a function with the field's
 * arguments, which differ per request.
 */
export function snapshotOf(value: unknown, type: OutputTypeLike | undefined, depth = 0): unknown {
  if (value === null || value === undefined || type === undefined || depth > MAX_DEPTH) return value;
  if (type.ofType) {
    // A list (an array or another iterable) or a non-null wrapper: a list's items have the wrapped type.
    if (typeof value === 'object' && Symbol.iterator in value && typeof value !== 'string' && isList(type)) {
      return Array.from(value as Iterable<unknown>, (item) => snapshotOf(item, type.ofType, depth + 1));
    }
    return snapshotOf(value, type.ofType, depth);
  }
  if (!type.getFields || typeof value !== 'object' || Array.isArray(value) || hasToJSON(value)) return value;
  const copy: Record<string, unknown> = { ...value };
  for (const [name, field] of Object.entries(type.getFields())) {
    const fieldValue = read(value, name);
    if (fieldValue === undefined || typeof fieldValue === 'function') continue;
    copy[name] = snapshotOf(fieldValue, field.type, depth + 1);
  }
  return copy;
}

/** A property as GraphQL's default resolver reads it; `undefined` when its getter throws (GraphQL would answer an error). */
function read(value: object, name: string): unknown {
  try {
    return (value as Record<string, unknown>)[name];
  } catch {
    return undefined;
  }
}

/** A list wrapper, told from a non-null one without importing graphql (graphql-js tags its classes). */
function isList(type: OutputTypeLike): boolean {
  return (type as { [Symbol.toStringTag]?: unknown })[Symbol.toStringTag] === 'GraphQLList';
}

/** A value that says how it is written as JSON (a Date, a Decimal, a Mongoose document): it is written so. */
function hasToJSON(value: object): boolean {
  return typeof (value as { toJSON?: unknown }).toJSON === 'function';
}
