import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { isNode, LineCounter, parseDocument, type Document } from 'yaml';
import type { z } from 'zod';
import { expandEnv, UnsetVariable } from './env';
import { chainConfigSchema, type ChainConfig } from './schema';

/**
 * A config file that cannot be used: one message naming the file, the line and the field.
 *
 * @public
 */
export class ConfigError extends Error {
  constructor(
    /** The file the error is in. */
    readonly file: string,
    /** 1-based line of the offending field (or of its parent when the field is missing). */
    readonly line: number,
    /** Dotted path of the offending field, e.g. `hops.1.upstream`. */
    readonly field: string,
    detail: string,
  ) {
    super(`${file}:${line}: ${field || '(top level)'}: ${detail}`);
    this.name = 'ConfigError';
  }
}

/**
 * Reads and validates a YAML or JSON config file (JSON is read as the YAML it also is).
 * Throws a {@link ConfigError} naming the file, the line and the field of the first problem.
 *
 * @example
 * ```ts
 * import { loadConfig, runChain, writeReports } from '@idempotency-chain/verify';
 *
 * const config = loadConfig('chain.yaml');
 * const report = await runChain(config, { configFile: 'chain.yaml', scenarios: ['lost-reply'] });
 * writeReports(report, 'reports');
 * process.exitCode = report.passed ? 0 : 1;
 * ```
 *
 * @public
 */
export function loadConfig(file: string): ChainConfig {
  return parseConfig(readFileSync(file, 'utf8'), file);
}

/**
 * Validates config text. `file` names the source in errors, and relative working
 * directories (`service.cwd`, `effect.cwd`) resolve against its folder; `${VAR}` and
 * `${VAR:-default}` in any string are replaced from the environment.
 *
 * @public
 */
export function parseConfig(text: string, file: string): ChainConfig {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false });
  const syntax = doc.errors[0];
  if (syntax) {
    throw new ConfigError(file, lines.linePos(syntax.pos[0]).line, '', syntax.message.split('\n')[0] ?? 'syntax error');
  }
  let raw: unknown;
  try {
    raw = expandEnv(doc.toJS(), process.env);
  } catch (error) {
    if (!(error instanceof UnsetVariable)) throw error;
    throw new ConfigError(file, lineOf(doc, lines, error.path), error.path.map(String).join('.'), error.message);
  }
  const result = chainConfigSchema.safeParse(raw);
  if (result.success) return relativeToFile(result.data, dirname(file));
  // One clear error rather than a wall: the first issue is the one to fix first.
  const issue = result.error.issues[0] as z.core.$ZodIssue;
  const unknown = issue.code === 'unrecognized_keys' ? issue.keys[0] : undefined;
  const path = unknown === undefined ? issue.path : [...issue.path, unknown];
  const detail = unknown === undefined ? issue.message : `unknown field "${unknown}"`;
  throw new ConfigError(file, lineOf(doc, lines, path), path.map(String).join('.'), detail);
}

/** The line of the deepest node along `path` that exists: a missing field points at its parent. */
function lineOf(doc: Document, lines: LineCounter, path: PropertyKey[]): number {
  for (let depth = path.length; depth >= 0; depth--) {
    const node = doc.getIn(path.slice(0, depth) as unknown[], true);
    if (isNode(node) && node.range) return lines.linePos(node.range[0]).line;
  }
  return 1;
}

/**
 * Working directories resolved against the config file's folder (the folder itself when
 * none is given), so a run behaves the same from any directory: a relative command or
 * script in `start` or `command` is then found beside the config, not beside the caller.
 */
function relativeToFile(config: ChainConfig, folder: string): ChainConfig {
  const withCwd = <T extends { service?: { cwd?: string } }>(hop: T): T =>
    hop.service ? { ...hop, service: { ...hop.service, cwd: resolve(folder, hop.service.cwd ?? '.') } } : hop;
  return {
    ...config,
    hops: config.hops.map(withCwd),
    ...(config.queue ? { queue: withCwd(config.queue) } : {}),
    effect: config.effect.command ? { ...config.effect, cwd: resolve(folder, config.effect.cwd ?? '.') } : config.effect,
  };
}
