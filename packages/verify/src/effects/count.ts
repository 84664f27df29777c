import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Client } from 'pg';
import { request } from 'undici';
import type { EffectConfig } from '../config/schema';
import { fillTemplate } from '../template';
import { readJsonPath } from './json-path';

const run = promisify(execFile);

/** How much of an answer an error shows: enough to see its shape, not a whole page. */
const SHOWN = 200;

/**
 * Counts the effects of one intent the way the config says: an HTTP GET and a JSON
 * path, a command that prints a number, or a PostgreSQL query given the intent's id as `$1`.
 * Throws when the answer is not a non-negative integer (a wrong count must not pass),
 * and when none came within `timeoutMs` (a stuck count must not hang the run).
 */
export async function countEffects(effect: EffectConfig, intentId: string, timeoutMs = 10_000): Promise<number> {
  if (effect.http) return viaHttp(effect.http, intentId, timeoutMs);
  if (effect.command) return asCount(await viaCommand(effect.command, effect.cwd, intentId, timeoutMs), 'command output');
  if (effect.postgres) return asCount(await viaPostgres(effect.postgres, intentId, timeoutMs), 'PostgreSQL effect count');
  throw new Error('no way to count effects configured');
}

async function viaHttp(http: NonNullable<EffectConfig['http']>, intentId: string, timeoutMs: number): Promise<number> {
  const url = fillTemplate(http.url, intentId);
  let text: string;
  let status: number;
  try {
    const answer = await request(url, { headers: fillTemplate(http.headers, intentId), signal: AbortSignal.timeout(timeoutMs) });
    status = answer.statusCode;
    text = await answer.body.text();
  } catch (error) {
    if ((error as Error).name === 'TimeoutError') {
      throw new Error(`HTTP effect count did not answer within ${timeoutMs}ms (${url})`, { cause: error });
    }
    throw error;
  }
  if (status !== 200) throw new Error(`effect count GET answered ${status}: ${text.slice(0, SHOWN)}`);
  const shown = `the answer began: ${text.slice(0, SHOWN)}`;
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (error) {
    throw new Error(`HTTP effect count: the answer is not JSON; ${shown}`, { cause: error });
  }
  const value = readJsonPath(document, http.path);
  try {
    return asCount(value, 'HTTP effect count');
  } catch (error) {
    throw new Error(`HTTP effect count: ${http.path} is ${JSON.stringify(value)} in the answer, not a count; ${shown}`, { cause: error });
  }
}

async function viaCommand(argv: string[], cwd: string | undefined, intentId: string, timeoutMs: number): Promise<unknown> {
  const [file, ...args] = fillTemplate(argv, intentId) as [string, ...string[]];
  const { stdout } = await run(file, args, { cwd, timeout: timeoutMs });
  return stdout.trim();
}

async function viaPostgres(pg: NonNullable<EffectConfig['postgres']>, intentId: string, timeoutMs: number): Promise<unknown> {
  // pg's own timeouts end the connection and the query; the race also bounds what they do not (a TLS or auth stall).
  const client = new Client({ connectionString: pg.url, connectionTimeoutMillis: timeoutMs, query_timeout: timeoutMs });
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`PostgreSQL effect count did not answer within ${timeoutMs}ms`)), timeoutMs);
  });
  const query = (async () => {
    await client.connect();
    const result = await client.query({ text: pg.query, values: [intentId], rowMode: 'array' });
    return result.rows[0]?.[0] as unknown;
  })();
  // The loser of the race must not surface as an unhandled rejection.
  query.catch(() => undefined);
  try {
    return await Promise.race([query, timeout]);
  } finally {
    clearTimeout(timer);
    await client.end().catch(() => undefined);
  }
}

function asCount(value: unknown, what: string): number {
  const count = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;
  if (typeof count === 'number' && Number.isInteger(count) && count >= 0) return count;
  throw new Error(`${what} is not a count: ${JSON.stringify(value)}`);
}
