import { fillTemplate } from '../template';

/** The entry's request with one field changed: what a reused key must be refused with. */
export interface Variation {
  /** The field changed: a body path (`amount`, `customer.id`; of a JSON or form text body too) or a query parameter (`?currency`). */
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
  // A field named in ignoredFields stands for everything under it too.
  const ignored = (field: string) => request.ignoredFields.some((name) => field === name || field.startsWith(`${name}.`));
  const bodies = bodyVariations(request.body, otherIntentId)
    .filter(({ field }) => !ignored(field))
    .map(({ field, body }) => ({ field, body, url: request.url }));
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

/**
 * The body with each scalar field changed in turn, by the field's path. A text body
 * is varied field by field too when it is JSON or a form (`amount=100&currency=EUR`),
 * and sent back as text; other text has no fields the verifier can tell apart, and
 * gives no variation (the scenario is then skipped, saying why), never a whole-text
 * change that a chain would refuse as malformed rather than as a reused key.
 */
function bodyVariations(body: unknown, otherIntentId: string): { field: string; body: unknown }[] {
  if (typeof body !== 'string') {
    return leaves(body, []).map((path) => ({ field: path.join('.'), body: changeAt(body, path, otherIntentId) }));
  }
  const json = parsedJson(body);
  if (json !== undefined) {
    return bodyVariations(json, otherIntentId).map(({ field, body: varied }) => ({ field, body: JSON.stringify(varied) }));
  }
  const pairs = formPairs(body);
  return pairs.map(([name], index) => ({
    field: decodeURIComponent(name.replace(/\+/g, ' ')),
    body: pairs.map(([key, value], at) => `${key}=${at === index ? (changed(value, otherIntentId) as string) : value}`).join('&'),
  }));
}

/** A JSON object or array a text body holds, `undefined` for other text. */
function parsedJson(text: string): unknown {
  try {
    const value = JSON.parse(text) as unknown;
    return value !== null && typeof value === 'object' ? value : undefined;
  } catch {
    return undefined;
  }
}

/** The `name=value` pairs of a form body, as written (templates kept); none when the text is not a form. */
function formPairs(text: string): [string, string][] {
  if (!/^[^=&\s]+=[^&\s]*(&[^=&\s]+=[^&\s]*)*$/.test(text)) return [];
  return text.split('&').map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]);
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
