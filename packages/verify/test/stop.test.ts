import { once } from 'node:events';
import { createServer } from 'node:net';
import { parseConfig } from '../src/config/load';
import { runChain } from '../src/run/runner';
import { freePorts } from './support/free-port';

describe('the end of a run', () => {
  it('closes the proxies and ends the service when its stop command fails, then says why', async () => {
    const [port, proxy] = (await freePorts(2)) as [number, number];
    // Ends by itself in a minute, so a run that leaves it behind leaves nothing for long.
    const script = `setTimeout(() => process.exit(), 60000);
      require('http').createServer((q, s) => { q.resume(); q.on('end', () => s.end('{}')); }).listen(${port}, '127.0.0.1');`;
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
              stop: [process.execPath, '-e', 'process.exit(3)'],
            },
          },
        ],
        effect: { command: [process.execPath, '-e', 'console.log(1)'] },
        settle: { quietMs: 300 },
        scenarios: ['later-press'],
      }),
      'chain.json',
    );
    await expect(runChain(config, { configFile: 'chain.json' })).rejects.toThrow(/^service payments: its stop command failed: /);
    // Nothing of the run is left: the service no longer answers and the proxy's port is free.
    await expect(fetch(`http://127.0.0.1:${port}/health`)).rejects.toThrow();
    const rebound = createServer().listen(proxy, '127.0.0.1');
    await once(rebound, 'listening');
    await new Promise((resolve) => rebound.close(resolve));
  });
});
