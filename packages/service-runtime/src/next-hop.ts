import { IdempotentHttpClient, type IdempotentClientOptions } from '@idempotency-chain/http-client';
import type { PinoLogger } from 'nestjs-pino';
import type { ServiceConfig } from './config';
import { logAttempts } from './logs';

/**
 * The client for the service's next hop (`ORDERS_URL`, `PAYMENTS_URL`): its
 * per-attempt timeout and attempt cap from the environment, a short backoff,
 * every attempt logged. The key of each call is the inbound request's
 * (`propagated`), or derived from what the call names; every call presents
 * the hop's service token (`ORDERS_TOKEN`, `PAYMENTS_TOKEN`); `options` override.
 */
export function nextHopClient(
  config: ServiceConfig,
  logger: PinoLogger,
  options: Partial<IdempotentClientOptions> = {},
): IdempotentHttpClient {
  if (!config.downstreamUrl) throw new Error(`${config.service} has no next hop`);
  return new IdempotentHttpClient({
    baseUrl: config.downstreamUrl,
    attemptTimeoutMs: config.attemptTimeoutMs,
    maxAttempts: config.maxAttempts,
    backoff: { initialMs: 50, maxMs: 200 },
    onAttempt: logAttempts(logger.logger),
    // This service's credentials at its next hop: the token the two of them share.
    headers: { authorization: `Bearer ${config.downstreamToken}` },
    ...options,
  });
}
