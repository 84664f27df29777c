import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Client } from 'pg';
import { request } from 'undici';
import type { EffectConfig } from '../config/schema';
import { fillTemplate } from '../template';
import { readJsonPath } from './json-path';

const run = promisify(execFile);

/**
 * Counts the effects of one intent the way the config says: an HTTP GET and a JSON
 * path, a command that prints a number, or a PostgreSQL query given the intent's id as `$1`.
 * Throws when the answer is not a non-negative integer: a wrong count must not pass.
 */
export async function countEffects(effect: EffectConfig, intentId: string): Promise<number> {
  if (effect.http) return asCount(await viaHttp(effect.http, intentId), 'HTTP effect count');
  if (effect.command) return asCount(await viaCommand(effect.command, effect.cwd, intentId), 'command output');
  if (effect.postgres) return asCount(await viaPostgres(effect.postgres, intentId), 'PostgreSQL effect count');
  throw new Error('no way to count effects configured');
}

async function viaHttp(http: NonNullable<EffectConfig['http']>, intentId: string): Promise<unknown> {
  const answer = await request(fillTemplate(http.url, intentId), { headers: fillTemplate(http.headers, intentId) });
  const text = await answer.body.text();
  if (answer.statusCode !== 200) throw new Error(`effect count GET answered ${answer.statusCode}: ${text.slice(0, 200)}`);
  return readJsonPath(JSON.parse(text), http.path);
}

async function viaCommand(argv: string[], cwd: string | undefined, intentId: string): Promise<unknown> {
  const [file, ...args] = fillTemplate(argv, intentId) as [string, ...string[]];
  const { stdout } = await run(file, args, { cwd, timeout: 30_000 });
  return stdout.trim();
}

async function viaPostgres(pg: NonNullable<EffectConfig['postgres']>, intentId: string): Promise<unknown> {
  const client = new Client({ connectionString: pg.url });
  await client.connect();
  try {
    const result = await client.query({ text: pg.query, values: [intentId], rowMode: 'array' });
    return result.rows[0]?.[0];
  } finally {
    await client.end();
  }
}

function asCount(value: unknown, what: string): number {
  const count = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;
  if (typeof count === 'number' && Number.isInteger(count) && count >= 0) return count;
  throw new Error(`${what} is not a count: ${JSON.stringify(value)}`);
}
