import { parseConfig } from '../../src/config/load';
import type { ChainConfig } from '../../src/config/schema';

/** A Node server on `port` answering every request `{}`: the service of a one-hop chain. */
export const serverScript = (port: number) =>
  `require('http').createServer((q, s) => { q.resume(); q.on('end', () => s.end('{}')); }).listen(${port}, '127.0.0.1');`;

/**
 * A one-hop chain, `payments` behind the proxy on `proxy`, started by the verifier
 * with `node -e start`; `service` adds to its service entry (a kill or stop command).
 */
export function oneHopChain(options: {
  port: number;
  proxy: number;
  start: string;
  service?: Record<string, unknown>;
  scenarios: string[];
}): ChainConfig {
  const { port, proxy } = options;
  return parseConfig(
    JSON.stringify({
      entry: { url: `http://127.0.0.1:${proxy}/pay`, body: { id: '{{intentId}}' }, timeoutMs: 5000, retries: 1 },
      hops: [
        {
          name: 'payments',
          listen: String(proxy),
          upstream: `http://127.0.0.1:${port}`,
          service: {
            start: [process.execPath, '-e', options.start],
            health: `http://127.0.0.1:${port}/health`,
            ...options.service,
          },
        },
      ],
      effect: { command: [process.execPath, '-e', 'console.log(1)'] },
      settle: { quietMs: 300 },
      scenarios: options.scenarios,
    }),
    'chain.json',
  );
}
