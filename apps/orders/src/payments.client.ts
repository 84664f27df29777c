import { IdempotentHttpClient, type IdempotentClientOptions } from '@idempotency-chain/http-client';
import type { Provider } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { PinoLogger } from 'nestjs-pino';
import type { OrdersConfig } from './config.js';
import { logAttempts } from './logs.js';

/** What payments answers once it charged an order. */
export interface Charge {
  chargeId: string;
  amountCents: number;
}

/**
 * Injection token of the options of the client that calls payments, provided
 * as a factory so a test (or a harness) can decorate them by token, e.g. with
 * another `keyPolicy`.
 */
export const PAYMENTS_CLIENT_OPTIONS = Symbol('PAYMENTS_CLIENT_OPTIONS');

/**
 * The client for payments (`PAYMENTS_URL`): per-attempt timeout and attempt
 * cap from the environment, a short backoff, every attempt logged, orders'
 * service token on every call. The key of each call is the order's
 * (`propagated`, the client's default).
 */
export const paymentsClient: Provider[] = [
  {
    provide: PAYMENTS_CLIENT_OPTIONS,
    inject: [ConfigService, PinoLogger],
    useFactory: (config: ConfigService<OrdersConfig, true>, logger: PinoLogger): IdempotentClientOptions => ({
      baseUrl: config.get('PAYMENTS_URL', { infer: true }),
      attemptTimeoutMs: config.get('DOWNSTREAM_TIMEOUT_MS', { infer: true }),
      maxAttempts: config.get('DOWNSTREAM_ATTEMPTS', { infer: true }),
      backoff: { initialMs: 50, maxMs: 200 },
      onAttempt: logAttempts(logger.logger),
      headers: { authorization: `Bearer ${config.get('PAYMENTS_TOKEN', { infer: true })}` },
    }),
  },
  {
    provide: IdempotentHttpClient,
    inject: [PAYMENTS_CLIENT_OPTIONS],
    useFactory: (options: IdempotentClientOptions) => new IdempotentHttpClient(options),
  },
];
