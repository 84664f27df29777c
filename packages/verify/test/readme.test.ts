import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { z } from 'zod';
import { chainConfigSchema } from '../src/config/schema';

const README = readFileSync(join(__dirname, '..', 'README.md'), 'utf8');

/** The README's annotated config, its commented-out alternatives (`# command: …`) uncommented. */
function documentedConfig(): unknown {
  const section = README.slice(README.indexOf('## The config file'));
  const block = /```yaml\n([\s\S]*?)```/.exec(section)?.[1];
  if (block === undefined) throw new Error('README: no yaml block under "## The config file"');
  return parse(block.replace(/^(\s*)# (\s*[\w-]+:)/gm, '$1$2'));
}

/** Every field path of the schema that the document lacks, and every one it has that the schema does not know. */
function compare(schema: z.ZodType, doc: unknown, path: string, out: { missing: string[]; unknown: string[] }): void {
  if (schema instanceof z.ZodOptional || schema instanceof z.ZodDefault) return compare(schema.unwrap() as z.ZodType, doc, path, out);
  if (schema instanceof z.ZodArray && Array.isArray(doc)) {
    // Fields may be shown on different elements (only the deepest hop has holdMs): merge them.
    const merged = doc.every((d) => typeof d === 'object' && d !== null) ? Object.assign({}, ...doc) : doc[0];
    return compare(schema.element as z.ZodType, merged, `${path.replace(/\.$/, '')}[].`, out);
  }
  if (!(schema instanceof z.ZodObject)) return;
  const fields = (typeof doc === 'object' && doc !== null ? doc : {}) as Record<string, unknown>;
  for (const [name, field] of Object.entries(schema.shape)) {
    if (!(name in fields)) out.missing.push(`${path}${name}`);
    else compare(field as z.ZodType, fields[name], `${path}${name}.`, out);
  }
  for (const name of Object.keys(fields)) if (!(name in schema.shape)) out.unknown.push(`${path}${name}`);
}

describe('the README', () => {
  it('documents every config field, and none the schema does not know', () => {
    const out = { missing: [] as string[], unknown: [] as string[] };
    compare(chainConfigSchema, documentedConfig(), '', out);
    expect(out).toEqual({ missing: [], unknown: [] });
  });

  it('shows a config the schema accepts, alternatives aside', () => {
    const config = documentedConfig() as { effect: Record<string, unknown>; queue: Record<string, unknown> };
    const { http } = config.effect;
    // The queue is shown on RabbitMQ, with NATS's stream and consumer as its alternative.
    const { stream: _stream, consumer: _consumer, ...queue } = config.queue;
    expect(chainConfigSchema.safeParse({ ...config, effect: { http }, queue }).error).toBeUndefined();
  });
});
