import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

/** npm settings a child keeps: where the cache is, and how the registry is reached. */
const KEPT_NPM_SETTINGS = new Set(
  ['cache', 'registry', 'userconfig', 'globalconfig', 'cafile', 'strict_ssl', 'proxy', 'https_proxy', 'noproxy'].map(
    (name) => `npm_config_${name}`,
  ),
);

/**
 * The environment of a child command: ours without the `npm_*` variables an
 * enclosing `npm test` sets (prefix, package, lifecycle), which would turn
 * an `npm install` in a scratch folder into one on this workspace. The
 * settings that say where npm's cache is and how to reach the registry stay.
 */
export function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('npm_') || KEPT_NPM_SETTINGS.has(name)));
  return { ...env, ...extra };
}

/** How a command ended: its exit code and both streams. */
export interface CommandResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/**
 * Run a command to completion, whatever its exit code; rejects only when it
 * could not run or ran out of time (killed, so no exit code).
 */
export async function commandResult(file: string, args: string[], options: CommandOptions): Promise<CommandResult> {
  try {
    const { stdout, stderr } = await execFileAsync(file, args, {
      cwd: options.cwd,
      env: childEnv(options.env),
      timeout: options.timeoutMs,
      maxBuffer: 32 * 1024 * 1024,
    });
    return { exitCode: 0, stdout, stderr };
  } catch (error) {
    const { code, stdout = '', stderr = '' } = error as { code?: unknown; stdout?: string; stderr?: string };
    if (typeof code !== 'number') throw error;
    return { exitCode: code, stdout, stderr };
  }
}

/** Where a command runs, for how long at most, and what it gets in its environment besides ours. */
export interface CommandOptions {
  cwd: string;
  timeoutMs: number;
  env?: Record<string, string>;
}

/**
 * Run a command to completion and return its standard output; a failure
 * rejects with the command line and the tail of both streams, which is what a
 * reader of a red test needs (a tsc error, an npm resolution conflict).
 */
export async function runCommand(file: string, args: string[], options: CommandOptions): Promise<string> {
  const describe = () => `${file} ${args.join(' ')} (in ${options.cwd})`;
  const tail = (text: string) => text.trim().split('\n').slice(-40).join('\n');
  const result = await commandResult(file, args, options).catch((error: unknown) => {
    throw new Error(`${describe()} failed: ${String(error)}`, { cause: error });
  });
  if (result.exitCode !== 0) throw new Error(`${describe()} exited ${result.exitCode}:\n${tail(result.stdout)}\n${tail(result.stderr)}`);
  return result.stdout;
}
