/**
 * Reads a value out of a JSON document by a path such as `$.charges.count`,
 * `data.items[0].n` or `$` (the whole document): the small subset of JSONPath that
 * names one value, which is all an effect count needs.
 */
export function readJsonPath(document: unknown, path: string): unknown {
  const steps = path
    .replace(/^\$\.?/, '')
    .split(/\.|\[(\d+)\]/)
    .filter((step): step is string => step !== undefined && step !== '');
  let value = document;
  for (const step of steps) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string, unknown>)[step];
  }
  return value;
}
