import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { TEST_CREDENTIALS } from '@idempotency-chain/service-runtime/testing';
import { createLabApp } from './lab-app';
import { loadLabConfig } from './lab-config';
import { CHAIN, type ServiceName } from './services';

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
 * and quiet logs. Call it with `post`/`chargeCount` from
 * `@idempotency-chain/service-runtime/testing`.
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
