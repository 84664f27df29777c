/** The placeholder every template (body, effect URL, command, header) may hold. */
const INTENT_PLACEHOLDER = '{{intentId}}';

/** Replaces `{{intentId}}` in every string of a JSON-like value, keeping its shape. */
export function fillTemplate<T>(template: T, intentId: string): T {
  return replaceAll(template, INTENT_PLACEHOLDER, intentId);
}

function replaceAll<T>(template: T, placeholder: string, value: string): T {
  if (typeof template === 'string') return template.split(placeholder).join(value) as T;
  if (Array.isArray(template)) return template.map((item) => replaceAll(item, placeholder, value)) as T;
  if (template !== null && typeof template === 'object') {
    return Object.fromEntries(Object.entries(template).map(([k, v]) => [k, replaceAll(v, placeholder, value)])) as T;
  }
  return template;
}

/** The placeholder for which caller presses: 1, or 2 for the second of `entry.callers`. */
const CALLER_PLACEHOLDER = '{{caller}}';

/** Replaces `{{caller}}` in every string of a JSON-like value with the caller's number. */
export function fillCaller<T>(template: T, caller: number): T {
  return replaceAll(template, CALLER_PLACEHOLDER, String(caller));
}
