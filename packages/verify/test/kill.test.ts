import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runChain } from '../src/run/runner';
import { freePorts } from './support/free-port';
import { oneHopChain, serverScript } from './support/one-hop-chain';

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
      ${serverScript(port)}`;
    const config = oneHopChain({ port, proxy, start: script, scenarios: ['kill'] });
    const run = await runChain(config, { configFile: 'chain.json' });
    expect(existsSync(marker)).toBe(true);
    expect(run.passed).toBe(false);
    expect(run.scenarios[0]?.error).toBe('service payments exited (7) before it was healthy');
  });

  it('fails with the reason when the kill command fails, rather than passing a crash that never happened', async () => {
    const [port, proxy] = (await freePorts(2)) as [number, number];
    const config = oneHopChain({
      port,
      proxy,
      start: serverScript(port),
      service: { kill: [process.execPath, '-e', 'process.exit(4)'] },
      scenarios: ['kill'],
    });
    const run = await runChain(config, { configFile: 'chain.json' });
    expect(run.passed).toBe(false);
    expect(run.scenarios[0]?.error).toMatch(/^service payments: its kill command failed: Command failed: /);
  });
});
