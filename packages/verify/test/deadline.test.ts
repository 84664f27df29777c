import { once } from 'node:events';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { parseConfig } from '../src/config/load';
import { runChain } from '../src/run/runner';
import { freePort } from './support/free-port';

describe('the run deadline', () => {
  it('ends a run whose chain never answers, stops its proxies, and says so', async () => {
    // Accepts every connection and never says a word: each attempt waits out its timeouts.
    const sockets: Socket[] = [];
    const mute = createServer((socket) => void sockets.push(socket));
    mute.listen(0, '127.0.0.1');
    await once(mute, 'listening');
    const proxy = await freePort();
    const config = parseConfig(
      JSON.stringify({
        entry: { url: `http://127.0.0.1:${proxy}/charges`, timeoutMs: 30_000, retries: 0 },
        hops: [{ name: 'payments', listen: `127.0.0.1:${proxy}`, upstream: `http://127.0.0.1:${(mute.address() as AddressInfo).port}` }],
        effect: { command: [process.execPath, '-e', 'console.log(1)'] },
        settle: { quietMs: 200, timeoutMs: 60_000 },
        scenarios: ['later-press'],
        deadlineMs: 1000,
      }),
      'chain.json',
    );
    const started = Date.now();
    try {
      await expect(runChain(config, { configFile: 'chain.json' })).rejects.toThrow(
        'the run passed its deadline (deadlineMs 1000) in scenario later-press; 0 of 1 scenarios finished',
      );
      // Far below the 30 s the caller would have waited.
      expect(Date.now() - started).toBeLessThan(15_000);
      const rebound = createServer().listen(proxy, '127.0.0.1');
      await once(rebound, 'listening');
      await new Promise((resolve) => rebound.close(resolve));
    } finally {
      sockets.forEach((s) => s.destroy());
      mute.close();
    }
  });
});
