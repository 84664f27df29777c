import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { loadConfig, type ServiceConfig, type ServiceName } from './config';
import type { BuildApp, RunOptions } from './service-app';

/** A service booted on an ephemeral loopback port, for tests over real HTTP. */
export interface BootedService {
  app: NestFastifyApplication;
  url: string;
  config: ServiceConfig;
}

/** Boot `service` as `build` makes it, with `env` (quiet logs, port 0), and listen on loopback. */
export async function bootService(
  service: ServiceName,
  build: BuildApp,
  env: Record<string, string>,
  options: RunOptions = {},
): Promise<BootedService> {
  const config = loadConfig(service, { LOG_LEVEL: 'silent', PORT: '0', ...env });
  const app = await build(config);
  await options.beforeListen?.(app, config);
  await app.listen(0, '127.0.0.1');
  return { app, url: (await app.getUrl()).replace('[::1]', '127.0.0.1'), config };
}

/** What a service answered. */
export interface Answer {
  status: number;
  headers: Headers;
  text: string;
}

/** POST `body` (JSON, or a string sent as it is) to `path` of `service`, with `key` as its `Idempotency-Key`. */
export async function post(service: { url: string }, path: string, body: unknown, key?: string): Promise<Answer> {
  const response = await fetch(`${service.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key === undefined ? {} : { 'idempotency-key': key }) },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

/** How many charges the payments ledger holds for `orderId`: the chain's ground truth. */
export async function chargeCount(payments: { url: string }, orderId: string): Promise<number> {
  const response = await fetch(`${payments.url}/charges?orderId=${encodeURIComponent(orderId)}`);
  return ((await response.json()) as { count: number }).count;
}
