import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { cp, readFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { freePort } from '@idempotency-chain/local-processes';
import { childEnv, runCommand } from './command';
import { APPS, installFixture, type FixtureName, type Manifest } from './fixture';
import type { NodeRelease } from './node-matrix';
import { LIBRARIES, type Tarballs } from './packed-packages';
/** What a copy leaves behind: installed and built output, turbo's logs. */
const NOT_COPIED = new Set(['node_modules', 'dist', '.turbo']);
/** An install, a build or a test run; this only stops a hung one. */
const STEP_TIMEOUT_MS = 600_000;

/** How an app starts, from its README: the environment its example sets, and the command. */
export interface StartCommand {
  env: Record<string, string>;
  argv: string[];
}

/** The dependencies of `apps/<app>` on this repository's packages other than the two published libraries. */
async function internalDependencies(app: string): Promise<string[]> {
  const manifest = JSON.parse(await readFile(join(APPS, app, 'package.json'), 'utf8')) as Manifest;
  return Object.keys({ ...manifest.dependencies, ...manifest.devDependencies }).filter(
    (name) => name.startsWith('@idempotency-chain/') && !(LIBRARIES as readonly string[]).includes(name),
  );
}

/**
 * The command under the `## Run` heading of an app's README that starts it
 * (`VAR=value ... node dist/main.js`): what a reader runs, so what the test runs.
 */
export async function readmeStartCommand(folder: string): Promise<StartCommand> {
  const readme = await readFile(join(folder, 'README.md'), 'utf8');
  const run = /^## Run\n([\s\S]*?)(?=^## |(?![\s\S]))/m.exec(readme)?.[1] ?? '';
  const line = /^```sh\n[\s\S]*?^((?:\w+=\S+ )*node \S+)$/m.exec(run)?.[1];
  if (!line) throw new Error(`${folder}/README.md has no "## Run" block with a \`VAR=value ... node <entry>\` line`);
  const env: Record<string, string> = {};
  const words = [...line.matchAll(/(\w+)=('[^']*'|\S+)|(\S+)/g)];
  const argv: string[] = [];
  for (const [, name, value, word] of words) {
    if (name !== undefined && value !== undefined && argv.length === 0) env[name] = value.replace(/^'(.*)'$/, '$1');
    else argv.push(word ?? `${name}=${value}`);
  }
  return { env, argv };
}

/** One step of a copy and how long it took. */
export interface StepTime {
  step: string;
  ms: number;
}

/**
 * `apps/<app>` copied alone into `folder` outside the workspace, as a team
 * takes it: the two libraries from their packed tarballs, everything else
 * as the app's lock in `consumers/fixtures/<app>` pins it, then built and
 * tested with its own scripts.
 */
export class AppCopy {
  readonly times: StepTime[] = [];

  private constructor(
    readonly app: FixtureName,
    readonly folder: string,
  ) {}

  /** Copy the folder; refuses an app that needs another package of ours. */
  static async copy(app: FixtureName, folder: string): Promise<AppCopy> {
    const internal = await internalDependencies(app);
    if (internal.length > 0) throw new Error(`apps/${app} depends on ${internal.join(', ')}: a copy has none of them`);
    const copy = new AppCopy(app, folder);
    await copy.timed('copy', () => cp(join(APPS, app), folder, { recursive: true, filter: (source) => !NOT_COPIED.has(basename(source)) }));
    return copy;
  }

  /** Point the libraries at their tarballs and install what the app's lock pins. */
  install(tarballs: Tarballs): Promise<void> {
    return this.timed('install', () => installFixture(this.folder, this.app, tarballs, STEP_TIMEOUT_MS));
  }

  /** The command of the copy's own `<script>`, as its package.json has it. */
  async script(script: string): Promise<string> {
    const manifest = JSON.parse(await readFile(join(this.folder, 'package.json'), 'utf8')) as Manifest;
    const command = manifest.scripts?.[script];
    if (command === undefined) throw new Error(`apps/${this.app}/package.json has no "${script}" script`);
    return command;
  }

  /** `npm run <script>` with the services the app's tests reach; `step` names it in the times. */
  run(script: string, env: Record<string, string> = {}, step = script): Promise<string> {
    return this.timed(step, () => runCommand('npm', ['run', script], { cwd: this.folder, timeoutMs: STEP_TIMEOUT_MS, env }));
  }

  /**
   * Start the copy with its README's command on `node` (`env` over the
   * README's), read its `GET /health`, and stop it.
   */
  async startedHealth(node: NodeRelease, env: Record<string, string>): Promise<{ status: number; body: unknown }> {
    const command = await readmeStartCommand(this.folder);
    const started = await this.timed(`start on ${node.version}`, async () =>
      startApp(this.folder, { ...command, env: { ...command.env, ...env } }, await freePort(), node),
    );
    try {
      const health = await fetch(`${started.baseUrl}/health`);
      return { status: health.status, body: await health.json() };
    } finally {
      await started.stop();
    }
  }

  /** The total of the steps so far. */
  totalMs(): number {
    return this.times.reduce((sum, time) => sum + time.ms, 0);
  }

  async timed<T>(step: string, work: () => Promise<T>): Promise<T> {
    const started = performance.now();
    try {
      return await work();
    } finally {
      this.times.push({ step, ms: Math.round(performance.now() - started) });
    }
  }
}

/** A started app: answers on `baseUrl` until stopped. */
interface StartedApp {
  baseUrl: string;
  stop(): Promise<void>;
}

/**
 * Run `command` in `folder` on `node` with `env` (over ours, without npm's)
 * and resolve once `GET /health` answers 200 on `port`; reject with its
 * output if it exits first or does not answer within `bootTimeoutMs`.
 */
async function startApp(
  folder: string,
  command: StartCommand,
  port: number,
  node: NodeRelease,
  bootTimeoutMs = 120_000,
): Promise<StartedApp> {
  const [file, ...args] = command.argv as [string, ...string[]];
  const child = spawn(file === 'node' ? node.binary : file, args, {
    cwd: folder,
    env: childEnv({ ...command.env, PORT: String(port), HOST: '127.0.0.1' }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  child.stdout.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  const exited = once(child, 'exit');
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    await exited;
  };
  const baseUrl = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + bootTimeoutMs;
  while (child.exitCode === null && child.signalCode === null && Date.now() < deadline) {
    const status = await fetch(`${baseUrl}/health`).then(
      (response) => response.status,
      () => 0,
    );
    if (status === 200) return { baseUrl, stop };
    await delay(200);
  }
  await stop();
  throw new Error(`${command.argv.join(' ')} in ${folder} did not answer GET /health with 200:\n${output.join('')}`);
}
