import {
  IdempotentHttpClient,
  isDeadlineExceededError,
  isRetriesExhaustedError,
  type HttpResponse,
  type KeyPolicy,
} from '@idempotency-chain/http-client';
import { BadGatewayException, GatewayTimeoutException, HttpException } from '@nestjs/common';
import type { Logger } from 'pino';
import type { ServiceConfig } from './config';
import { attemptLogger } from './observability';

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
      return config.service === 'gateway' ? 'per-attempt' : 'propagate';
    case 'propagated':
      return 'propagate';
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
export async function callNextHop<T>(
  client: IdempotentHttpClient,
  path: string,
  body: unknown,
  options: { businessKey?: string } = {},
): Promise<T> {
  let response: HttpResponse<T>;
  try {
    response = await client.post<T>(path, body, options);
  } catch (error) {
    if (isDeadlineExceededError(error)) throw new GatewayTimeoutException(error.message, { cause: error });
    if (isRetriesExhaustedError(error)) throw new BadGatewayException(error.message, { cause: error });
    throw error;
  }
  if (response.status >= 400) throw new HttpException(response.body as object, response.status);
  return response.body;
}
