import { join } from 'node:path';
import { spawnNode, type NodeChild } from './processes';
import { REDIS_URL } from './redis-tools';

/** Which library guards `fixtures/charge-server`'s route. */
export type Library = 'bare' | 'ours' | 'node-idempotency';

/** One `fixtures/charge-server` child: the app as a user deploys it. */
export interface ChargeServer {
  library: Library;
  url: string;
  child: NodeChild;
}

/** How the charge app is served: its HTTP adapter, and whether ours traces each decision (`TracingObserver` under an SDK). */
export interface AppShape {
  adapter: 'fastify' | 'express';
  otel: boolean;
}

/** Start a `fixtures/charge-server` child for `library`, pinned to `cpus` when given; resolves once it listens. */
export async function startChargeServer(
  library: Library,
  { prefix, cpus, shape = { adapter: 'fastify', otel: false } }: { prefix: string; cpus?: string; shape?: AppShape },
): Promise<ChargeServer> {
  const script = join(__dirname, 'fixtures', 'charge-server.js');
  const { child, match } = await spawnNode(`charge-${library}`, script, {
    env: {
      BENCH_LIBRARY: library,
      BENCH_PREFIX: prefix,
      BENCH_ADAPTER: shape.adapter,
      BENCH_OTEL: shape.otel ? '1' : '0',
      REDIS_URL,
      PORT: '0',
      NODE_ENV: 'production',
    },
    readyLine: /^READY (\d+)$/,
    cpus,
    // Pinned to one core of a busy machine, a Nest app can take longer than the default to boot.
    timeoutMs: 60_000,
  });
  return { library, url: `http://127.0.0.1:${match?.[1]}`, child };
}
