/** The placeholder every template (body, effect URL, command, header) may hold. */
const INTENT_PLACEHOLDER = '{{intentId}}';

/** Replaces `{{intentId}}` in every string of a JSON-like value, keeping its shape. */
export function fillTemplate<T>(template: T, intentId: string): T {
  if (typeof template === 'string') return template.split(INTENT_PLACEHOLDER).join(intentId) as T;
  if (Array.isArray(template)) return template.map((item) => fillTemplate(item, intentId)) as T;
  if (template !== null && typeof template === 'object') {
    return Object.fromEntries(Object.entries(template).map(([k, v]) => [k, fillTemplate(v, intentId)])) as T;
  }
  return template;
}
