import { fillTemplate } from '../template';

/** The entry's request with one field changed: what a reused key must be refused with. */
export interface Variation {
  /** The field changed: a body path (`amount`, `customer.id`, `body` for a whole string body) or a query parameter (`?currency`). */
  field: string;
  /** The entry's body template with that field changed (a field holding `{{intentId}}` gets the other intent's id). */
  body: unknown;
  /** The entry's URL, with that query parameter changed. */
  url: string;
}

/** What a config says about the entry's request and the fields a chain may rightly leave out of its fingerprint. */
export interface VariedRequest {
  url: string;
  body?: unknown;
  ignoredFields: readonly string[];
  ignoredQuery: readonly string[];
}

/**
 * One variation per scalar field of the entry's body and per query parameter, each
 * alone: a fingerprint that leaves out any one of them (the amount, the currency)
 * replays the first answer instead of refusing, and is found by that field's press.
 * `otherIntentId` fills the fields that hold `{{intentId}}`: the other body is
 * another intent, whose effects must stay none.
 */
export function variations(request: VariedRequest, otherIntentId: string): Variation[] {
  const ignored = new Set(request.ignoredFields);
  const bodies = leaves(request.body, [])
    .map((path) => path.join('.') || 'body')
    .filter((field) => !ignored.has(field))
    .map((field) => ({ field, body: changeAt(request.body, field === 'body' ? [] : field.split('.'), otherIntentId), url: request.url }));
  const url = new URL(request.url);
  const queries = [...url.searchParams.keys()]
    .filter((name) => !request.ignoredQuery.includes(name))
    .map((name) => {
      const varied = new URL(request.url);
      varied.searchParams.set(name, changed(url.searchParams.get(name) ?? '', otherIntentId) as string);
      return { field: `?${name}`, body: request.body, url: varied.toString() };
    });
  return [...bodies, ...queries];
}

/** Paths of the scalar fields (strings, numbers, booleans) of a JSON-like value. */
function leaves(value: unknown, path: string[]): string[][] {
  if (Array.isArray(value)) return value.flatMap((item, index) => leaves(item, [...path, String(index)]));
  if (value !== null && typeof value === 'object') return Object.entries(value).flatMap(([name, item]) => leaves(item, [...path, name]));
  return ['string', 'number', 'boolean'].includes(typeof value) ? [path] : [];
}

function changeAt(value: unknown, path: readonly string[], otherIntentId: string): unknown {
  const [head, ...rest] = path;
  if (head === undefined) return changed(value, otherIntentId);
  if (Array.isArray(value)) return value.map((item, index) => (String(index) === head ? changeAt(item, rest, otherIntentId) : item));
  const fields = value as Record<string, unknown>;
  return { ...fields, [head]: changeAt(fields[head], rest, otherIntentId) };
}

/** Another value of the same kind, one a chain would accept as readily: a number one more, a flag flipped. */
function changed(value: unknown, otherIntentId: string): unknown {
  if (typeof value === 'number') return value + 1;
  if (typeof value === 'boolean') return !value;
  const text = String(value);
  const filled = fillTemplate(text, otherIntentId);
  if (filled !== text) return filled;
  return /^-?\d+$/.test(text) ? String(Number(text) + 1) : `${text}-changed`;
}
