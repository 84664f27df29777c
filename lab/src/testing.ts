import type { ServiceName } from '@idempotency-chain/service-runtime';
import { bootService, type BootedService } from '@idempotency-chain/service-runtime/testing';
import { createLabApp } from './lab-app';
import { loadLabConfig } from './lab-config';
import { CHAIN } from './services';

/**
 * Boot `service` through the lab, in this process, on an ephemeral loopback
 * port: `env` holds its configuration and the lab's (`KEY_POLICY`,
 * `LAB_NAIVE`), as the lab's `main.ts` reads them. Call it with
 * `post`/`chargeCount` from `@idempotency-chain/service-runtime/testing`.
 */
export function bootLabService(service: ServiceName, env: Record<string, string>): Promise<BootedService> {
  const lab = loadLabConfig(env);
  return bootService(service, (config) => createLabApp(service, config, lab), env, { beforeListen: CHAIN[service].beforeListen });
}
