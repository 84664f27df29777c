import type { KeyPolicy, KeyStrategy } from '@idempotency-chain/http-client';
import type { IdempotencyModuleOptions, KeyMode } from '@idempotency-chain/idempotency/nest';
import { randomUUID } from 'node:crypto';
import type { LabKeyPolicy } from './lab-config';
import type { ServiceName } from './services';

/**
 * The bug the write-up's `per-attempt` policy shows: a fresh key on every
 * attempt, and none from the intent, so each retry looks like a new one.
 */
export const PER_ATTEMPT: KeyStrategy = { intentKey: () => undefined, attemptKey: () => randomUUID() };

/**
 * How a service keys its route under each lab policy, given how the app
 * keys it (`propagated` is the services as they are). The gateway is the
 * outermost hop: under `per-attempt` its caller sends no key, so its route
 * can only pass requests through.
 */
function routeKeyMode(policy: LabKeyPolicy, service: ServiceName, app: KeyMode | undefined): KeyMode | undefined {
  switch (policy) {
    case 'none':
      return 'none';
    case 'fingerprint':
      return 'fingerprint';
    case 'per-attempt':
      return service === 'gateway' ? 'optional' : app;
    case 'propagated':
      return app;
  }
}

/**
 * How a service keys its calls to the next hop under each lab policy (the
 * apps propagate). Only the outermost retry loop, the gateway's, mints a
 * key per attempt under `per-attempt`; inner hops forward what they got.
 */
export function outboundKeyPolicy(policy: LabKeyPolicy, service: ServiceName): KeyPolicy {
  switch (policy) {
    case 'none':
    case 'fingerprint':
      return 'none';
    case 'per-attempt':
      return service === 'gateway' ? PER_ATTEMPT : 'propagated';
    case 'propagated':
      return 'propagated';
  }
}

/** The service's idempotency options under `policy`. */
export function keyedOptions(options: IdempotencyModuleOptions, policy: LabKeyPolicy, service: ServiceName): IdempotencyModuleOptions {
  return { ...options, keyMode: routeKeyMode(policy, service, options.keyMode) };
}
