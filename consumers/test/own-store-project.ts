import { copyFile, mkdir, readdir, readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { commandResult, runCommand, type CommandResult } from './command';
import { installFixture } from './fixture';
import type { NodeRelease } from './node-matrix';
import type { Tarballs } from './packed-packages';

/** The store a team writes against the public API, and its conformance runs under Vitest and node:test. */
const OWN_STORE_SOURCES = resolve(__dirname, '../own-store');
/** The workspace's TypeScript. */
const TSC = require.resolve('typescript/bin/tsc');
/** The suite on the in-memory stores runs in seconds; this only stops a hung run. */
const RUN_TIMEOUT_MS = 600_000;

/** One case as a runner reported it. */
interface CaseOutcome {
  name: string;
  passed: boolean;
}

/** What one run of the suite reported: its exit code and every case's outcome. */
export interface SuiteRun {
  exitCode: number;
  cases: CaseOutcome[];
  output: string;
}

/**
 * An ESM project outside the workspace that installs the packed
 * `@idempotency-chain/idempotency` and Vitest as `fixtures/own-store` pins
 * them, holds the files of `consumers/own-store`, and compiles them with
 * their own `tsconfig.json` for node:test (Vitest runs the TypeScript itself).
 */
export class OwnStoreProject {
  private constructor(readonly folder: string) {}

  static async install(folder: string, tarballs: Tarballs): Promise<OwnStoreProject> {
    await mkdir(folder, { recursive: true });
    for (const file of await readdir(OWN_STORE_SOURCES)) await copyFile(join(OWN_STORE_SOURCES, file), join(folder, file));
    await installFixture(folder, 'own-store', tarballs, RUN_TIMEOUT_MS);
    await runCommand(process.execPath, [TSC, '-p', folder], { cwd: folder, timeoutMs: RUN_TIMEOUT_MS });
    return new OwnStoreProject(folder);
  }

  /** The names of the suite's cases, read from the installed package. */
  async caseNames(): Promise<string[]> {
    const script = [
      "const { storeConformanceCases } = await import('@idempotency-chain/idempotency/testing');",
      "const cases = storeConformanceCases(async () => { throw new Error('not run'); });",
      'console.log(JSON.stringify(cases.map((c) => c.name)));',
    ].join('\n');
    const stdout = await runCommand(process.execPath, ['--input-type=module', '-e', script], { cwd: this.folder, timeoutMs: 60_000 });
    return JSON.parse(stdout) as string[];
  }

  /** The suite under Vitest on `node`, on `store`, read from Vitest's JSON report. */
  async vitest(store: OwnStore, node: NodeRelease): Promise<SuiteRun> {
    const report = join(this.folder, `vitest-${store}-${node.version}.json`);
    const vitest = join(this.folder, 'node_modules', 'vitest', 'vitest.mjs');
    const result = await this.run(store, node, [vitest, 'run', '--reporter=json', `--outputFile=${report}`]);
    const { testResults } = JSON.parse(await readFile(report, 'utf8')) as {
      testResults: Array<{ assertionResults: Array<{ title: string; status: string }> }>;
    };
    const cases = testResults.flatMap((file) =>
      file.assertionResults.map(({ title, status }) => ({ name: title, passed: status === 'passed' })),
    );
    return { exitCode: result.exitCode, cases, output: result.stdout + result.stderr };
  }

  /** The suite under node:test on `node`, on `store`, read from its TAP report. */
  async nodeTest(store: OwnStore, node: NodeRelease): Promise<SuiteRun> {
    const result = await this.run(store, node, ['--test-reporter=tap', 'dist/conformance.node-test.js']);
    // Top-level test points: `ok 3 - name` or `not ok 3 - name`, the name TAP-escaped.
    const cases = [...result.stdout.matchAll(/^(not )?ok \d+ - (.*)$/gm)].map(([, not, name]) => ({
      name: (name ?? '').replace(/\\(.)/g, '$1'),
      passed: not === undefined,
    }));
    return { exitCode: result.exitCode, cases, output: result.stdout + result.stderr };
  }

  private run(store: OwnStore, node: NodeRelease, args: string[]): Promise<CommandResult> {
    return commandResult(node.binary, args, { cwd: this.folder, timeoutMs: RUN_TIMEOUT_MS, env: { OWN_STORE: store } });
  }
}

/** Which store of `own-store/harness.ts` a run tests. */
export type OwnStore = 'map' | 'broken';
