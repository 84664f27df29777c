import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { RunReport } from '@idempotency-chain/verify';
import { commandResult } from './command';
import { installFixture } from './fixture';
import { pathFor, type NodeRelease } from './node-matrix';
import type { Tarballs } from './packed-packages';

/** One run of the CLI: its exit code, what it printed, and its JSON report (none on exit 2). */
export interface VerifierRun {
  exitCode: number;
  output: string;
  report: RunReport | undefined;
}

/**
 * The verifier as a team's CI installs it: the packed
 * `@idempotency-chain/verify` in a project outside the workspace
 * (`fixtures/verify`), run through its `idempotency-verify` bin on a chosen
 * Node.js.
 */
export class VerifierCli {
  private constructor(readonly folder: string) {}

  static async install(folder: string, tarballs: Tarballs): Promise<VerifierCli> {
    await mkdir(folder, { recursive: true });
    await installFixture(folder, 'verify', tarballs, 600_000);
    return new VerifierCli(folder);
  }

  /**
   * `idempotency-verify run` on `node`, with `config` written as JSON into
   * `dir` and the reports under `dir/report`; `args` are the CLI's options.
   */
  async run(node: NodeRelease, config: unknown, dir: string, args: string[] = []): Promise<VerifierRun> {
    await mkdir(dir, { recursive: true });
    const configFile = join(dir, 'chain.json');
    await writeFile(configFile, JSON.stringify(config, null, 2));
    const reportDir = join(dir, 'report');
    const bin = join(this.folder, 'node_modules', '.bin', 'idempotency-verify');
    const result = await commandResult(bin, ['run', configFile, '--report-dir', reportDir, ...args], {
      cwd: dir,
      timeoutMs: 600_000,
      env: pathFor(node),
    });
    const output = result.stdout + result.stderr;
    if (result.exitCode === 2) return { exitCode: 2, output, report: undefined };
    const report = JSON.parse(await readFile(join(reportDir, 'report.json'), 'utf8')) as RunReport;
    return { exitCode: result.exitCode, output, report };
  }
}
