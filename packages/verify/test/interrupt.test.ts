import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { buffer } from 'node:stream/consumers';
import { builtCli } from './support/cli';
import { freePorts } from './support/free-port';
import { oneHopChainJson } from './support/one-hop-chain';

describe('the command, stopped by a signal', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'verify-interrupt-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it.each([
    ['SIGTERM', 143],
    ['SIGINT', 130],
  ] as const)('stops every service and proxy it started on %s, and says so', async (signal, code) => {
    const cli = builtCli();
    const [port, proxy] = (await freePorts(2)) as [number, number];
    const pidFile = join(dir, 'service.pid');
    // Healthy, but never answers a charge: the run is stuck in its press when the signal comes.
    const script = `require('fs').writeFileSync(${JSON.stringify(pidFile)}, String(process.pid));
      require('http').createServer((q, s) => { if (q.method === 'GET') s.end('ok'); }).listen(${port}, '127.0.0.1');`;
    const file = join(dir, 'chain.json');
    writeFileSync(
      file,
      oneHopChainJson({ port, proxy, start: script, entry: { timeoutMs: 60_000, retries: 0 }, scenarios: ['later-press'] }),
    );
    const child = spawn(process.execPath, [cli, 'run', file, '--report-dir', join(dir, 'report')], { stdio: ['ignore', 'pipe', 'pipe'] });
    const stderr = buffer(child.stderr);
    const exited = once(child, 'exit');
    try {
      // Once the scenario started, the service is up and the proxy listens.
      for await (const line of createInterface({ input: child.stdout })) {
        if (line === '[1/1] later-press started') break;
      }
      child.kill(signal);
      const [exitCode] = (await exited) as [number | null];
      expect(exitCode).toBe(code);
      expect((await stderr).toString()).toContain(`interrupted by ${signal}`);
      await expect(fetch(`http://127.0.0.1:${port}/health`)).rejects.toThrow();
      const rebound = createServer().listen(proxy, '127.0.0.1');
      await once(rebound, 'listening');
      await new Promise((resolve) => rebound.close(resolve));
    } finally {
      child.kill('SIGKILL');
      // Whatever happened above, the service does not outlive the test.
      if (existsSync(pidFile)) {
        try {
          process.kill(Number(readFileSync(pidFile, 'utf8')), 'SIGKILL');
        } catch {
          // Already gone, as it should be.
        }
      }
    }
  });
});
