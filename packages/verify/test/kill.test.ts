import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConfig } from '../src/config/load';
import { runChain } from '../src/run/runner';
import { freePorts } from './support/free-port';

describe('the kill scenario', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'verify-kill-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('fails with the reason when the killed service does not come back', async () => {
    const [port, proxy] = (await freePorts(2)) as [number, number];
    const marker = join(dir, 'started-once');
    // Serves the first time it is started; refuses to start a second time.
    const script = `const fs = require('fs');
      if (fs.existsSync(${JSON.stringify(marker)})) process.exit(7);
      fs.writeFileSync(${JSON.stringify(marker)}, '');
      require('http').createServer((q, s) => { q.resume(); q.on('end', () => s.end('{}')); }).listen(${port}, '127.0.0.1');`;
    const config = parseConfig(
      JSON.stringify({
        entry: { url: `http://127.0.0.1:${proxy}/pay`, body: { id: '{{intentId}}' }, timeoutMs: 5000, retries: 1 },
        hops: [
          {
            name: 'payments',
            listen: String(proxy),
            upstream: `http://127.0.0.1:${port}`,
            service: { start: [process.execPath, '-e', script], health: `http://127.0.0.1:${port}/health` },
          },
        ],
        effect: { command: [process.execPath, '-e', 'console.log(1)'] },
        settle: { quietMs: 300 },
        scenarios: ['kill'],
      }),
      'chain.json',
    );
    const run = await runChain(config, { configFile: 'chain.json' });
    expect(existsSync(marker)).toBe(true);
    expect(run.passed).toBe(false);
    expect(run.scenarios[0]?.error).toBe('service payments exited (7) before it was healthy');
  });

  it('fails with the reason when the kill command fails, rather than passing a crash that never happened', async () => {
    const [port, proxy] = (await freePorts(2)) as [number, number];
    const script = `require('http').createServer((q, s) => { q.resume(); q.on('end', () => s.end('{}')); }).listen(${port}, '127.0.0.1');`;
    const config = parseConfig(
      JSON.stringify({
        entry: { url: `http://127.0.0.1:${proxy}/pay`, body: { id: '{{intentId}}' }, timeoutMs: 5000, retries: 1 },
        hops: [
          {
            name: 'payments',
            listen: String(proxy),
            upstream: `http://127.0.0.1:${port}`,
            service: {
              start: [process.execPath, '-e', script],
              health: `http://127.0.0.1:${port}/health`,
              kill: [process.execPath, '-e', 'process.exit(4)'],
            },
          },
        ],
        effect: { command: [process.execPath, '-e', 'console.log(1)'] },
        settle: { quietMs: 300 },
        scenarios: ['kill'],
      }),
      'chain.json',
    );
    const run = await runChain(config, { configFile: 'chain.json' });
    expect(run.passed).toBe(false);
    expect(run.scenarios[0]?.error).toMatch(/^service payments: its kill command failed: Command failed: /);
  });
});
