import autocannon from 'autocannon';
import { percentile } from './stats';

/** What one autocannon run measured. */
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

/**
 * Where each request's `Idempotency-Key` comes from: a function called per
 * request (autocannon's `setupRequest`, which rebuilds the request each
 * time), autocannon's own `[<id>]` replacement (a new id per request, as
 * `autocannon -H 'idempotency-key=[<id>]' --idReplacement` sends), or one
 * fixed key (the request is built once).
 */
export type KeySource = (() => string) | { generated: true } | { fixed: string };

export interface LoadOptions {
  url: string;
  connections: number;
  durationS: number;
  key: KeySource;
  /** `POST` target; `/orders` unless given. */
  path?: string;
  /** Extra headers of every request (e.g. the caller's credentials). */
  headers?: Record<string, string>;
}

const BODY = JSON.stringify({ orderId: 'order-bench', amountCents: 500 });

/** Fixed-concurrency load with autocannon, in this process. */
export async function load(options: LoadOptions): Promise<LoadResult> {
  const samples: number[] = [];
  const statusCodes: Record<string, number> = {};
  const base = { 'content-type': 'application/json', ...options.headers };
  const { key } = options;
  const path = options.path ?? '/orders';
  const request: autocannon.Request =
    typeof key === 'function'
      ? {
          method: 'POST',
          path,
          body: BODY,
          headers: base,
          setupRequest: (req) => ({ ...req, headers: { ...base, 'idempotency-key': key() } }),
        }
      : { method: 'POST', path, body: BODY, headers: { ...base, 'idempotency-key': 'generated' in key ? '[<id>]' : key.fixed } };
  let instance!: autocannon.Instance;
  const finished = new Promise<autocannon.Result>((resolve, reject) => {
    instance = autocannon(
      {
        url: options.url,
        connections: options.connections,
        duration: options.durationS,
        requests: [request],
        idReplacement: typeof key !== 'function' && 'generated' in key,
      },
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
