import { once } from 'node:events';
import { createServer } from 'node:net';
import { runChain } from '../src/run/runner';
import { freePorts } from './support/free-port';
import { oneHopChain, serverScript } from './support/one-hop-chain';

describe('the end of a run', () => {
  it('closes the proxies and ends the service when its stop command fails, then says why', async () => {
    const [port, proxy] = (await freePorts(2)) as [number, number];
    const config = oneHopChain({
      port,
      proxy,
      // Ends by itself in a minute, so a run that leaves it behind leaves nothing for long.
      start: `setTimeout(() => process.exit(), 60000); ${serverScript(port)}`,
      service: { stop: [process.execPath, '-e', 'process.exit(3)'] },
      scenarios: ['later-press'],
    });
    await expect(runChain(config, { configFile: 'chain.json' })).rejects.toThrow(/^service payments: its stop command failed: /);
    // Nothing of the run is left: the service no longer answers and the proxy's port is free.
    await expect(fetch(`http://127.0.0.1:${port}/health`)).rejects.toThrow();
    const rebound = createServer().listen(proxy, '127.0.0.1');
    await once(rebound, 'listening');
    await new Promise((resolve) => rebound.close(resolve));
  });
});
