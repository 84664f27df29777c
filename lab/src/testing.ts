import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createLabApp } from './lab-app';
import { loadLabConfig } from './lab-config';
import { CHAIN, type ServiceName } from './services';

/**
 * Credentials of a chain booted in a test: the gateway's key of `acct-7`
 * and the service tokens of its inner hops, so that services booted with
 * them call each other. `bootLabService` uses them unless `env` sets its own.
 */
export const TEST_CREDENTIALS: Readonly<Record<string, string>> = {
  GATEWAY_API_KEYS: JSON.stringify({ 'test-api-key-of-acct-7': 'acct-7' }),
  ORDERS_TOKEN: 'test-token-of-orders-hop',
  PAYMENTS_TOKEN: 'test-token-of-payments-hop',
};

/** A service the lab booted in this process, on an ephemeral loopback port. */
export interface LabService {
  app: NestFastifyApplication;
  url: string;
  /** The `Authorization` its callers present: a token it accepts (`post` and `chargeCount` send it). */
  authorization: string;
}

/** The variable holding the token each service accepts: the gateway's customers', or the hop's service token. */
const ACCEPTED: Readonly<Record<ServiceName, (env: Record<string, string>) => string>> = {
  gateway: (env) => Object.keys(JSON.parse(env.GATEWAY_API_KEYS!) as object)[0]!,
  orders: (env) => env.ORDERS_TOKEN!,
  payments: (env) => env.PAYMENTS_TOKEN!,
};

/**
 * Boot `service` through the lab, in this process, on an ephemeral loopback
 * port: `env` holds its configuration and the lab's (`KEY_POLICY`,
 * `LAB_NAIVE`), as the lab's `main.ts` reads them, over `TEST_CREDENTIALS`
 * and quiet logs. Call it with `post` and `chargeCount`.
 */
export async function bootLabService(service: ServiceName, env: Record<string, string>): Promise<LabService> {
  const all = { LOG_LEVEL: 'silent', PORT: '0', ...TEST_CREDENTIALS, ...env };
  const lab = loadLabConfig(all);
  const chain = await CHAIN[service](all, lab);
  const app = await createLabApp(service, chain, lab);
  await chain.beforeListen?.(app);
  await app.listen(0, '127.0.0.1');
  return { app, url: (await app.getUrl()).replace('[::1]', '127.0.0.1'), authorization: `Bearer ${ACCEPTED[service](all)}` };
}

/** Where a test sends requests, and the `Authorization` it presents there (none: unauthenticated). */
export interface Target {
  url: string;
  authorization?: string;
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
