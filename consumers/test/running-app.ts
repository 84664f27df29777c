import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { childEnv } from './command';
import type { NodeRelease } from './node-matrix';

/** What a call to the app answered. */
export interface AppResponse {
  status: number;
  text: string;
  /** The `idempotent-replayed` header, `null` when absent. */
  replayed: string | null;
}

/**
 * A compiled scratch app running as its own Node process, on a port the
 * system chose: it prints `{"listening":"<port>"}` once it listens.
 */
export class RunningApp {
  private constructor(
    private readonly child: ChildProcess,
    readonly baseUrl: string,
  ) {}

  /** Start `entry` on `node` and resolve once it listens; reject with its output if it exits first. */
  static async start(entry: string, env: Record<string, string>, node: NodeRelease, bootTimeoutMs = 120_000): Promise<RunningApp> {
    const child = spawn(node.binary, [entry], { env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
    const output: string[] = [];
    child.stderr?.on('data', (chunk: Buffer) => output.push(chunk.toString()));
    const port = new Promise<string>((resolvePort, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`${entry} did not listen within ${bootTimeoutMs} ms:\n${output.join('')}`)),
        bootTimeoutMs,
      );
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`${entry} exited with ${code} before listening:\n${output.join('')}`));
      });
      createInterface({ input: child.stdout }).on('line', (line) => {
        output.push(`${line}\n`);
        const listening = /^\{"listening":"(\d+)"\}$/.exec(line)?.[1];
        if (listening === undefined) return;
        clearTimeout(timer);
        resolvePort(listening);
      });
    });
    try {
      return new RunningApp(child, `http://127.0.0.1:${await port}`);
    } catch (error) {
      child.kill('SIGKILL');
      throw error;
    }
  }

  /** POST a JSON body to `path` with the given headers. */
  async post(path: string, body: unknown, headers: Record<string, string>): Promise<AppResponse> {
    const response = await fetch(`${this.baseUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
    return { status: response.status, text: await response.text(), replayed: response.headers.get('idempotent-replayed') };
  }

  /** Stop the process and wait until it has exited. */
  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = once(this.child, 'exit');
    this.child.kill('SIGTERM');
    await exited;
  }
}
