import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { runCommand } from './command';
import { codeLines, MAX_QUICK_START_LINES, printedLines, quickStart, writeQuickStart, type CodeBlock } from './quick-start';

vi.setConfig({ testTimeout: 180_000, hookTimeout: 180_000 });

const PACKAGES = resolve(__dirname, '../../packages');
const TSC = require.resolve('typescript/bin/tsc');
/** The keyed payments of the verifier's Python test chain: a real service for the verifier's quick start. */
const PYTHON_CHAIN = join(PACKAGES, 'verify/test/fixtures/python-chain/chain.py');

// Each published package's README opens with a quick start; this runs it as a reader would copy it.
describe.each(['idempotency', 'http-client', 'verify'])('the quick start of packages/%s/README.md', (name) => {
  let blocks: CodeBlock[];
  let folder: string;
  const services: ChildProcess[] = [];

  beforeAll(async () => {
    blocks = await quickStart(join(PACKAGES, name, 'README.md'));
    folder = await mkdtemp(join(tmpdir(), `quick-start-${name}-`));
    await writeQuickStart(folder, blocks);
  });

  afterAll(async () => {
    await Promise.all(services.map(stop));
    await rm(folder, { recursive: true, force: true });
  });

  it(`is code of at most ${MAX_QUICK_START_LINES} lines`, () => {
    expect(blocks.length).toBeGreaterThan(0);
    expect(codeLines(blocks)).toBeLessThanOrEqual(MAX_QUICK_START_LINES);
  });

  it('compiles and prints what its comments say, or its commands exit 0', async () => {
    const program = blocks.find((block) => block.lang === 'ts');
    if (program) {
      await runCommand(process.execPath, [TSC, '-p', folder], { cwd: folder, timeoutMs: 120_000 });
      const stdout = await runCommand(process.execPath, [join(folder, 'out/quick-start.js')], { cwd: folder, timeoutMs: 30_000 });
      expect(printedLines(program).length).toBeGreaterThan(0);
      expect(stdout.trim().split('\n')).toEqual(printedLines(program));
    }
    for (const config of blocks.filter((block) => block.lang === 'yaml')) {
      // The config names the service it verifies: start that service where the config says it listens.
      const port = /upstream: http:\/\/127\.0\.0\.1:(\d+)/.exec(config.code)?.[1];
      if (port) services.push(await startPayments(Number(port), join(folder, 'charges.sqlite')));
    }
    for (const commands of blocks.filter((block) => block.lang === 'sh')) {
      const stdout = await runCommand('bash', ['-euo', 'pipefail', '-c', commands.code], { cwd: folder, timeoutMs: 150_000 });
      expect(stdout).toMatch(/^(\d+)\/\1 scenarios passed/m);
    }
  });
});

/** The Python chain's keyed payments on `port`; resolves once it listens, rejects if it exits first. */
async function startPayments(port: number, db: string): Promise<ChildProcess> {
  const child = spawn('python3', [PYTHON_CHAIN, 'payments', '--variant', 'keyed', '--port', String(port), '--db', db], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = once(child, 'exit').then(() => false);
  const listening = (async () => {
    for await (const line of createInterface({ input: child.stdout })) if (line.startsWith('listening ')) return true;
    return false;
  })();
  if (!(await Promise.race([listening, exited]))) throw new Error(`payments could not listen on 127.0.0.1:${port}`);
  return child;
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exit = once(child, 'exit');
  child.kill('SIGTERM');
  await exit;
}
