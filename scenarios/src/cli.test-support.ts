import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { ResultsFile } from './results-file';

/** The package's built commands (`pretest` builds them). */
const DIST = resolve(__dirname, '../dist');

/** What a finished command said. */
export interface CommandResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** A running command, its output so far, and its end. */
export interface RunningCommand {
  child: ChildProcess;
  stderr(): string;
  done: Promise<CommandResult>;
}

/**
 * Start a built command (`main.js`) as the user would,
 * with `env` over this process's environment (`undefined` removes a variable).
 */
export function startCommand(script: string, args: string[], env: Record<string, string | undefined> = {}): RunningCommand {
  const merged: NodeJS.ProcessEnv = { ...process.env };
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) delete merged[name];
    else merged[name] = value;
  }
  const child = spawn(process.execPath, [join(DIST, script), ...args], { env: merged, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const done = new Promise<CommandResult>((resolveDone) =>
    child.once('close', (code, signal) => resolveDone({ code, signal, stdout, stderr })),
  );
  return { child, stderr: () => stderr, done };
}

/** Run a built command to its end. */
export function runCommand(script: string, args: string[], env: Record<string, string | undefined> = {}): Promise<CommandResult> {
  return startCommand(script, args, env).done;
}

/** A fresh temporary folder: where a test's run writes instead of the repository. */
export function tempRoot(label: string): string {
  return mkdtempSync(join(tmpdir(), `scenarios-${label}-`));
}

/** The results.json a run wrote under `root`. */
export function resultsUnder(root: string): ResultsFile {
  return JSON.parse(readFileSync(join(root, 'scenarios', 'results.json'), 'utf8')) as ResultsFile;
}

/** `git status --porcelain` of the repository: what a test must leave as it found it. */
export function gitStatus(): string {
  return execFileSync('git', ['status', '--porcelain', '--untracked-files=all'], { cwd: resolve(__dirname, '../..'), encoding: 'utf8' });
}

/** Render a chart with the built `charts.js` in a child process (Vega is an ES module) and return the SVG. */
export function renderChartInChild(title: string, bars: unknown[]): string {
  const code = `const c = require(${JSON.stringify(join(DIST, 'charts.js'))});
c.renderSvg(c.chargesChart(${JSON.stringify(title)}, ${JSON.stringify(bars)})).then((svg) => process.stdout.write(svg));`;
  return execFileSync(process.execPath, ['-e', code], { encoding: 'utf8', timeout: 60_000 });
}
