import {
  IdempotentHttpClient,
  type KeyPolicy,
  type KeyStrategy,
} from '@idempotency-chain/http-client';
import { relayAnswer } from '@idempotency-chain/http-client/nest';
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { ServiceConfig } from './config';
import { attemptLogger } from './observability';

/** The lab's deliberate bug: a fresh key on every attempt, so each retry looks like a new intent. */
const PER_ATTEMPT: KeyStrategy = { intentKey: () => undefined, attemptKey: () => randomUUID() };

/**
 * How a hop keys its call to the next one under each lab policy. Only the
 * outermost retry loop (the gateway's) mints a key per attempt under
 * `per-attempt`; inner hops forward what they got.
 */
export function clientKeyPolicy(config: ServiceConfig): KeyPolicy {
  switch (config.keyPolicy) {
    case 'none':
    case 'fingerprint':
      return 'none';
    case 'per-attempt':
      return config.service === 'gateway' ? PER_ATTEMPT : 'propagated';
    case 'propagated':
      return 'propagated';
  }
}

/** The client for the next hop, with the configured timeout and attempt cap. */
export function createDownstreamClient(config: ServiceConfig, logger: Logger): IdempotentHttpClient {
  if (!config.downstreamUrl) throw new Error(`${config.service} has no downstream service`);
  return new IdempotentHttpClient({
    baseUrl: config.downstreamUrl,
    keyPolicy: clientKeyPolicy(config),
    attemptTimeoutMs: config.attemptTimeoutMs,
    maxAttempts: config.maxAttempts,
    backoff: { initialMs: 50, maxMs: 200 },
    onAttempt: attemptLogger(logger),
  });
}

/**
 * POST to the next hop and hand back its answer: a success as the value, a
 * refusal (4xx, 5xx) as the same status, and a call that never got a final
 * answer as 502 (retries exhausted) or 504 (deadline). Those two are
 * transient, so this hop's key is released and a retry runs again.
 */
export function callNextHop<T>(
  client: IdempotentHttpClient,
  path: string,
  body: unknown,
  options: { businessKey?: string } = {},
): Promise<T> {
  return relayAnswer(client.post<T>(path, body, options));
}
