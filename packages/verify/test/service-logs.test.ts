import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buffer } from 'node:stream/consumers';
import { freePorts } from './support/free-port';
import { builtCli } from './support/cli';
import { oneHopChainJson, serverScript } from './support/one-hop-chain';

describe("a service's output", () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'verify-logs-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('goes to a file under the report directory, not into the verdict', async () => {
    const cli = builtCli();
    const [port, proxy] = (await freePorts(2)) as [number, number];
    const script = `console.log('payments says hello on stdout'); console.error('payments says hello on stderr'); ${serverScript(port)}`;
    const file = join(dir, 'chain.json');
    writeFileSync(file, oneHopChainJson({ port, proxy, start: script, scenarios: ['later-press'] }));
    const report = join(dir, 'report');
    const child = spawn(process.execPath, [cli, 'run', file, '--report-dir', report], { stdio: ['ignore', 'pipe', 'pipe'] });
    const [stdout, stderr, [code]] = await Promise.all([buffer(child.stdout), buffer(child.stderr), once(child, 'close')]);
    expect(code).toBe(0);
    expect(`${stdout.toString()}${stderr.toString()}`).not.toContain('says hello');
    const log = readFileSync(join(report, 'services', 'payments.log'), 'utf8');
    expect(log).toContain('payments says hello on stdout\n');
    expect(log).toContain('payments says hello on stderr\n');
  });
});
