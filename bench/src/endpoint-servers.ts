import { join } from 'node:path';
import type { Mode } from './fixtures/guard';
import type { LoadJob } from './load-process';
import { spawnNode, type NodeChild } from './processes';
import { REDIS_URL } from './redis-tools';
import { DATABASE_URL } from './pg-tools';

export type { Mode };

/** What a server's `GET /bench/stats` reports. */
interface ServerStats {
  /** Times the handler ran (a replay does not run it). */
  handled: number;
  /** Redis commands sent by the guard, by name. */
  commands: Record<string, number>;
}

/** One `fixtures/endpoint-server` child. */
export interface EndpointServer {
  mode: Mode;
  url: string;
  child: NodeChild;
  stats(): Promise<ServerStats>;
}

/** Where a server writes, and what its handler does. */
export interface ServerOptions {
  /** Every Redis key the server writes starts with it. */
  prefix: string;
  /** The handler's work (see `fixtures/order-work`): `pg` inserts one row into `table`. */
  work?: 'noop' | 'pg';
  table?: string;
  /** Hook the guard's Redis client to count its commands (the default); `false` leaves the server as a user runs it. */
  countCommands?: boolean;
  /** Pin the server to these cores (`taskset -c`). */
  cpus?: string;
}

/** Start a `fixtures/endpoint-server` child guarded by `mode`; resolves once it listens. */
export async function startServer(
  mode: Mode,
  { prefix, work = 'noop', table = '', countCommands = true, cpus }: ServerOptions,
): Promise<EndpointServer> {
  const script = join(__dirname, 'fixtures', 'endpoint-server.js');
  const { child, match } = await spawnNode(`endpoint-${mode}${work === 'pg' ? '-pg' : ''}`, script, {
    env: {
      BENCH_MODE: mode,
      BENCH_PREFIX: prefix,
      BENCH_WORK: work,
      BENCH_TABLE: table,
      BENCH_COUNT_COMMANDS: countCommands ? '1' : '0',
      REDIS_URL,
      DATABASE_URL,
      PORT: '0',
      NODE_ENV: 'production',
    },
    readyLine: /^READY (\d+)$/,
    cpus,
    // Pinned to one core of a busy machine, a Nest app can take longer than the default to boot.
    timeoutMs: cpus ? 60_000 : undefined,
  });
  const url = `http://127.0.0.1:${match?.[1]}`;
  return { mode, url, child, stats: async () => (await (await fetch(`${url}/bench/stats`)).json()) as ServerStats };
}

/** One `POST /orders` with the benchmark's body; resolves with the status. */
async function postOrder(url: string, key: string): Promise<number> {
  const response = await fetch(`${url}/orders`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': key },
    body: JSON.stringify({ orderId: 'order-bench', amountCents: 500 }),
  });
  await response.arrayBuffer();
  return response.status;
}

/** A way of loading a server: which server, which keys. */
export interface Variant {
  name: string;
  server: EndpointServer;
  /** The key of a sequential request (counting round trips). */
  key: () => string;
  /** The keys the load generator sends: autocannon's own id per request, or the fixed key. */
  loadKey: LoadJob['key'];
  /** Run once before the first measurement (e.g. store the result a replay returns). */
  seed?: () => Promise<void>;
}

/** A fixed key, stored by one request before the replays start. */
export function replayVariant(name: string, server: EndpointServer, key: string): Variant {
  return {
    name,
    server,
    key: () => key,
    loadKey: { fixed: key },
    seed: async () => {
      const status = await postOrder(server.url, key);
      if (status !== 201) throw new Error(`${name}: seeding the replay key answered ${status}`);
    },
  };
}

/** A new key for every request: every request executes. */
export function freshVariant(name: string, server: EndpointServer, keyPrefix: string): Variant {
  let n = 0;
  return { name, server, key: () => `${keyPrefix}${(n++).toString(36)}`, loadKey: { generated: true } };
}

/** Redis commands per request, counted over sequential requests (nothing in flight at either end). */
export interface RoundTrips {
  perRequest: number;
  byName: Record<string, number>;
}

/** Send `count` requests one at a time and count the Redis commands the server sent for them. */
export async function countRoundTrips(variant: Variant, count: number): Promise<RoundTrips> {
  const before = await variant.server.stats();
  for (let i = 0; i < count; i++) {
    const status = await postOrder(variant.server.url, variant.key());
    if (status !== 201) throw new Error(`${variant.name}: a sequential request answered ${status}`);
  }
  const after = await variant.server.stats();
  const byName: Record<string, number> = {};
  for (const [name, n] of Object.entries(after.commands)) {
    const sent = n - (before.commands[name] ?? 0);
    if (sent > 0) byName[name] = sent;
  }
  return { perRequest: Object.values(byName).reduce((a, b) => a + b, 0) / count, byName };
}

/** `2.00 (evalsha 400)`: commands per request, and what they were over the count. */
export function fmtRoundTrips(trips: RoundTrips): string {
  const names = Object.entries(trips.byName).map(([name, n]) => `${name} ${n}`);
  return `${trips.perRequest.toFixed(2)} (${names.join(', ') || 'none'})`;
}
