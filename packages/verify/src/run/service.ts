import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { appendFileSync, closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { request } from 'undici';
import type { ServiceConfig } from '../config/schema';

const run = promisify(execFile);

/** How long the started process may outlive its service's `kill` or `stop` command before it is killed. */
const LINGER_MS = 10_000;

/**
 * A hop's service run by the verifier: started, health-checked, killed without
 * warning (the crash between an effect and its answer) and started again.
 */
export class ServiceProcess {
  private child: ChildProcess | undefined;

  /**
   * @param logFile - where the service's stdout and stderr go (appended, a line marking
   *   each start); without one its stderr goes to the verifier's and its stdout nowhere.
   */
  constructor(
    private readonly name: string,
    private readonly config: ServiceConfig,
    private readonly logFile?: string,
  ) {}

  /** Starts the service and resolves once its health URL answers 2xx; throws if it exits or stays down. */
  async start(): Promise<void> {
    // A process left from an earlier run (or one the kill never reached) would pass the
    // health check for the one started here, which then fails to bind: the run would
    // verify the old process, its old code and its memory.
    if (await this.answers()) {
      throw new Error(
        `service ${this.name}: ${this.config.health} answers before the service was started; stop what serves it, or drop the hop's service entry to verify the one running`,
      );
    }
    const [command, ...args] = this.config.start as [string, ...string[]];
    const output = this.openLog();
    const child = spawn(command, args, {
      cwd: this.config.cwd,
      env: { ...process.env, ...this.config.env },
      stdio: output === undefined ? ['ignore', 'ignore', 'inherit'] : ['ignore', output, output],
      // Its own process group, signalled as one: what a start command runs (npm start,
      // sh -c) dies with it, and a Ctrl-C at the terminal reaches the verifier alone,
      // which then stops every service itself.
      detached: true,
    });
    // The child holds its own copy of the descriptor.
    if (output !== undefined) closeSync(output);
    this.child = child;
    const deadline = Date.now() + this.config.startTimeoutMs;
    while (Date.now() < deadline) {
      if (child.exitCode !== null || child.signalCode !== null) {
        throw new Error(`service ${this.name} exited (${child.exitCode ?? child.signalCode}) before it was healthy${this.seeLog()}`);
      }
      if (await this.healthy()) return;
      // A health URL can only be polled; the interval is short against any start time.
      await sleep(100);
    }
    await this.end('SIGKILL');
    throw new Error(`service ${this.name} was not healthy within ${this.config.startTimeoutMs}ms${this.seeLog()}`);
  }

  /** Opens the log file for appending, after a line saying which start this is; `undefined` without one. */
  private openLog(): number | undefined {
    if (this.logFile === undefined) return undefined;
    mkdirSync(dirname(this.logFile), { recursive: true });
    appendFileSync(this.logFile, `--- ${this.name} started ${new Date().toISOString()}: ${this.config.start.join(' ')}\n`);
    return openSync(this.logFile, 'a');
  }

  private seeLog(): string {
    return this.logFile === undefined ? '' : ` (its output: ${this.logFile})`;
  }

  /**
   * Kills the service as a crash or an OOM kill would, and waits for it to be gone:
   * with the config's `kill` command, else with SIGKILL to the started process's group.
   */
  async kill(): Promise<void> {
    // A service already down makes the crash a no-op, and the scenario would pass untested.
    if (!(await this.answers())) {
      throw new Error(`not exercised: service ${this.name} did not answer ${this.config.health} when it was to be killed: nothing to kill`);
    }
    if (this.config.kill) {
      await this.runThenWait('kill', this.config.kill);
    } else {
      await this.end('SIGKILL');
    }
    await this.untilDown();
  }

  /**
   * Waits until the health URL stops answering: a signal that reached only a client of
   * the service (`npm start`, `sh -c`, `docker run`) leaves it serving with its memory,
   * and a crash that never happened must not pass for one that was survived.
   */
  private async untilDown(): Promise<void> {
    const deadline = Date.now() + LINGER_MS;
    while (await this.answers()) {
      if (Date.now() >= deadline) {
        throw new Error(
          `service ${this.name} still answers ${this.config.health} after it was killed: the kill reached only the process the verifier started, not the service (give the service a kill command)`,
        );
      }
      await sleep(100);
    }
  }

  /** Stops the service with the config's `stop` command, else SIGTERM, and waits; kills it if it lingers. */
  async stop(): Promise<void> {
    if (this.config.stop) {
      try {
        return await this.runThenWait('stop', this.config.stop);
      } catch (failure) {
        // Whatever the command did not do, the process the verifier started does not outlive the run.
        await this.terminate();
        throw failure;
      }
    }
    await this.terminate();
  }

  /** SIGTERM to the started process's group, and SIGKILL if it lingers. */
  private terminate(): Promise<void> {
    return this.end('SIGTERM');
  }

  /**
   * Sends `signal` to the started process's group and waits for the process to exit;
   * SIGKILL to the group if it lingers. Nothing to do when it already exited.
   */
  private async end(signal: NodeJS.Signals): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exit = once(child, 'exit');
    signalGroup(child, signal);
    const lingering = setTimeout(() => signalGroup(child, 'SIGKILL'), LINGER_MS);
    await exit;
    clearTimeout(lingering);
  }

  /**
   * Runs the service's own `kill` or `stop` command, then waits for the started process
   * (a `docker run` ends with its container); one that lingers is killed.
   */
  private async runThenWait(what: 'kill' | 'stop', argv: string[]): Promise<void> {
    const child = this.child;
    const [file, ...args] = argv as [string, ...string[]];
    try {
      await run(file, args, { cwd: this.config.cwd, env: { ...process.env, ...this.config.env }, timeout: 30_000 });
    } catch (error) {
      throw new Error(`service ${this.name}: its ${what} command failed: ${(error as Error).message.split('\n')[0]}`, { cause: error });
    }
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exit = once(child, 'exit');
    const lingering = setTimeout(() => signalGroup(child, 'SIGKILL'), LINGER_MS);
    await exit;
    clearTimeout(lingering);
  }

  /** True when anything answers the health URL, whatever the status: the port is served. */
  private async answers(): Promise<boolean> {
    try {
      const answer = await request(this.config.health, { signal: AbortSignal.timeout(2000) });
      await answer.body.dump();
      return true;
    } catch {
      return false;
    }
  }

  private async healthy(): Promise<boolean> {
    try {
      const answer = await request(this.config.health, { signal: AbortSignal.timeout(2000) });
      await answer.body.dump();
      return answer.statusCode >= 200 && answer.statusCode < 300;
    } catch {
      return false;
    }
  }
}

/** Signals every process of the child's group (its pid is the group's id, as it was started detached). */
function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    if (child.pid !== undefined) process.kill(-child.pid, signal);
  } catch {
    // The group is already gone (ESRCH): nothing left to signal.
  }
}
