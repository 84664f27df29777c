import { parseConfig } from '../../src/config/load';
import type { ChainConfig } from '../../src/config/schema';

/** A Node server on `port` answering every request `{}`: the service of a one-hop chain. */
export const serverScript = (port: number) =>
  `require('http').createServer((q, s) => { q.resume(); q.on('end', () => s.end('{}')); }).listen(${port}, '127.0.0.1');`;

/** What a one-hop chain is made of; `entry` adds to (or replaces) the entry's fields. */
export interface OneHopOptions {
  port: number;
  proxy: number;
  start: string;
  service?: Record<string, unknown>;
  entry?: Record<string, unknown>;
  scenarios: string[];
}

/**
 * A one-hop chain as a config file holds it (JSON), `payments` behind the proxy on
 * `proxy`, started by the verifier with `node -e start`; `service` adds to its service
 * entry (a kill or stop command).
 */
export function oneHopChainJson(options: OneHopOptions): string {
  const { port, proxy } = options;
  return JSON.stringify({
    entry: { url: `http://127.0.0.1:${proxy}/pay`, body: { id: '{{intentId}}' }, timeoutMs: 5000, retries: 1, ...options.entry },
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
  });
}

/** The same chain, as the verifier reads it. */
export function oneHopChain(options: OneHopOptions): ChainConfig {
  return parseConfig(oneHopChainJson(options), 'chain.json');
}
