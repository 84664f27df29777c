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

/**
 * Run a command to completion and return its standard output; a failure
 * rejects with the command line and the tail of both streams, which is what a
 * reader of a red test needs (a tsc error, an npm resolution conflict).
 */
export async function runCommand(file: string, args: string[], options: { cwd: string; timeoutMs: number }): Promise<string> {
  try {
    const { stdout } = await execFileAsync(file, args, {
      cwd: options.cwd,
      env: childEnv(),
      timeout: options.timeoutMs,
      maxBuffer: 32 * 1024 * 1024,
    });
    return stdout;
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    const tail = (text: string) => text.trim().split('\n').slice(-40).join('\n');
    throw new Error(`${file} ${args.join(' ')} (in ${options.cwd}) failed:\n${tail(stdout)}\n${tail(stderr)}`, { cause: error });
  }
}
