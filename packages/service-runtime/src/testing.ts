import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { loadConfig, type ServiceConfig, type ServiceName } from './config';
import type { BuildApp, RunOptions } from './service-app';

/** The account whose key `TEST_CREDENTIALS` gives the gateway. */
export const TEST_ACCOUNT = 'acct-7';

/**
 * Credentials of a chain booted in a test: the gateway's key of
 * `TEST_ACCOUNT` and the service tokens of its inner hops, so that services
 * booted with them call each other. `bootService` uses them unless `env`
 * sets its own.
 */
export const TEST_CREDENTIALS: Readonly<Record<string, string>> = {
  GATEWAY_API_KEYS: JSON.stringify({ [`test-api-key-of-${TEST_ACCOUNT}`]: TEST_ACCOUNT }),
  ORDERS_TOKEN: 'test-token-of-orders-hop',
  PAYMENTS_TOKEN: 'test-token-of-payments-hop',
};

/** A service booted on an ephemeral loopback port, for tests over real HTTP. */
export interface BootedService {
  app: NestFastifyApplication;
  url: string;
  config: ServiceConfig;
  /** The `Authorization` its callers present: a token it accepts (`post` and `chargeCount` send it). */
  authorization: string;
}

/** Where a test sends requests, and the `Authorization` it presents there (none: unauthenticated). */
export interface Target {
  url: string;
  authorization?: string;
}

/** Boot `service` as `build` makes it, with `env` (quiet logs, port 0), and listen on loopback. */
export async function bootService(
  service: ServiceName,
  build: BuildApp,
  env: Record<string, string>,
  options: RunOptions = {},
): Promise<BootedService> {
  const config = loadConfig(service, { LOG_LEVEL: 'silent', PORT: '0', ...TEST_CREDENTIALS, ...env });
  const app = await build(config);
  await options.beforeListen?.(app, config);
  await app.listen(0, '127.0.0.1');
  const [token] = config.callers.keys();
  return { app, url: (await app.getUrl()).replace('[::1]', '127.0.0.1'), config, authorization: `Bearer ${token}` };
}

/** What a service answered. */
export interface Answer {
  status: number;
  headers: Headers;
  text: string;
}

/** The `authorization` header of `target`, when it has one. */
const credentialsOf = (target: Target): Record<string, string> =>
  target.authorization === undefined ? {} : { authorization: target.authorization };

/**
 * POST `body` (JSON, or a string sent as it is) to `path` of `service`, with
 * `key` as its `Idempotency-Key` and the service's `authorization`.
 */
export async function post(service: Target, path: string, body: unknown, key?: string): Promise<Answer> {
  const response = await fetch(`${service.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...credentialsOf(service), ...(key === undefined ? {} : { 'idempotency-key': key }) },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

/** How many charges the payments ledger holds for `orderId`: the chain's ground truth. */
export async function chargeCount(payments: Target, orderId: string): Promise<number> {
  const response = await fetch(`${payments.url}/charges?orderId=${encodeURIComponent(orderId)}`, { headers: credentialsOf(payments) });
  return ((await response.json()) as { count: number }).count;
}
