import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'undici';
import type { ServiceConfig } from '../config/schema';

/**
 * A hop's service run by the verifier: started, health-checked, killed without
 * warning (the crash between an effect and its answer) and started again.
 */
export class ServiceProcess {
  private child: ChildProcess | undefined;

  constructor(
    private readonly name: string,
    private readonly config: ServiceConfig,
  ) {}

  /** Starts the service and resolves once its health URL answers 2xx; throws if it exits or stays down. */
  async start(): Promise<void> {
    const [command, ...args] = this.config.start as [string, ...string[]];
    const child = spawn(command, args, {
      cwd: this.config.cwd,
      env: { ...process.env, ...this.config.env },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    this.child = child;
    const deadline = Date.now() + this.config.startTimeoutMs;
    while (Date.now() < deadline) {
      if (child.exitCode !== null || child.signalCode !== null) {
        throw new Error(`service ${this.name} exited (${child.exitCode ?? child.signalCode}) before it was healthy`);
      }
      if (await this.healthy()) return;
      // A health URL can only be polled; the interval is short against any start time.
      await sleep(100);
    }
    await this.kill();
    throw new Error(`service ${this.name} was not healthy within ${this.config.startTimeoutMs}ms`);
  }

  /** Kills the service with SIGKILL, as a crash or an OOM kill would, and waits for it to be gone. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exit = once(child, 'exit');
    child.kill('SIGKILL');
    await exit;
  }

  /** Asks the service to stop (SIGTERM) and waits; kills it if it lingers. */
  async stop(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exit = once(child, 'exit');
    child.kill('SIGTERM');
    const lingering = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exit;
    clearTimeout(lingering);
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
