import autocannon from 'autocannon';
import { percentile } from './stats';

/** What one autocannon run against `POST /orders` measured. */
export interface LoadResult {
  /** Responses per second over the run. */
  rps: number;
  /** Latency of every response, from autocannon's own timer (ms, not rounded). */
  p50: number;
  p99: number;
  total: number;
  /** Responses other than 2xx, plus errors and timeouts: must be 0. */
  failures: number;
  statusCodes: Record<string, number>;
}

export interface LoadOptions {
  url: string;
  connections: number;
  durationS: number;
  /** The `Idempotency-Key` of each request: a new one per request, or a fixed one. */
  key: () => string;
}

const BODY = JSON.stringify({ orderId: 'order-bench', amountCents: 500 });

/**
 * Fixed-concurrency load with autocannon. Every variant builds its request
 * the same way (`setupRequest` sets the key header per request), so the load
 * generator costs the same whatever the server does with the key.
 */
export async function load(options: LoadOptions): Promise<LoadResult> {
  const samples: number[] = [];
  const statusCodes: Record<string, number> = {};
  const request: autocannon.Request = {
    method: 'POST',
    path: '/orders',
    headers: { 'content-type': 'application/json' },
    body: BODY,
    setupRequest: (req) => ({ ...req, headers: { 'content-type': 'application/json', 'idempotency-key': options.key() } }),
  };
  let instance!: autocannon.Instance;
  const finished = new Promise<autocannon.Result>((resolve, reject) => {
    instance = autocannon(
      { url: options.url, connections: options.connections, duration: options.durationS, requests: [request] },
      (error: unknown, result: autocannon.Result) => (error ? reject(error) : resolve(result)),
    );
  });
  instance.on('response', (_client: unknown, statusCode: number, _bytes: number, responseTime: number) => {
    samples.push(responseTime);
    statusCodes[statusCode] = (statusCodes[statusCode] ?? 0) + 1;
  });
  const result = await finished;
  const non2xx = Object.entries(statusCodes)
    .filter(([code]) => !code.startsWith('2'))
    .reduce((sum, [, n]) => sum + n, 0);
  return {
    rps: result.requests.total / result.duration,
    p50: percentile(samples, 50),
    p99: percentile(samples, 99),
    total: result.requests.total,
    failures: non2xx + result.errors + result.timeouts,
    statusCodes,
  };
}

/** A source of keys no other request of this run uses. */
export function freshKeys(prefix: string): () => string {
  let n = 0;
  return () => `${prefix}${(n++).toString(36)}`;
}
