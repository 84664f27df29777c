import { IdempotentHttpClient, type IdempotentClientOptions } from '@idempotency-chain/http-client';
import type { Provider } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { PinoLogger } from 'nestjs-pino';
import type { GatewayConfig } from './config.js';
import { logAttempts } from './logs.js';

/** What the gateway asks orders for: `POST /orders`. */
export interface OrderPayment {
  orderId: string;
  account: string;
  amountCents: number;
}

/** What orders answers once the order is charged. */
export interface PaidOrder {
  orderId: string;
  chargeId: string;
  amountCents: number;
  status: 'paid';
}

/**
 * Injection token of the options of the client that calls orders, provided
 * as a factory so a test (or a harness) can decorate them by token, e.g. with
 * another `keyPolicy`.
 */
export const ORDERS_CLIENT_OPTIONS = Symbol('ORDERS_CLIENT_OPTIONS');

/**
 * The client for orders (`ORDERS_URL`): per-attempt timeout and attempt cap
 * from the environment, a short backoff, every attempt logged, the gateway's
 * service token on every call. The key of each call is the checkout's
 * (`propagated`, the client's default), or derived from what the call names.
 */
export const ordersClient: Provider[] = [
  {
    provide: ORDERS_CLIENT_OPTIONS,
    inject: [ConfigService, PinoLogger],
    useFactory: (config: ConfigService<GatewayConfig, true>, logger: PinoLogger): IdempotentClientOptions => ({
      baseUrl: config.get('ORDERS_URL', { infer: true }),
      attemptTimeoutMs: config.get('DOWNSTREAM_TIMEOUT_MS', { infer: true }),
      maxAttempts: config.get('DOWNSTREAM_ATTEMPTS', { infer: true }),
      backoff: { initialMs: 50, maxMs: 200 },
      onAttempt: logAttempts(logger.logger),
      headers: { authorization: `Bearer ${config.get('ORDERS_TOKEN', { infer: true })}` },
    }),
  },
  {
    provide: IdempotentHttpClient,
    inject: [ORDERS_CLIENT_OPTIONS],
    useFactory: (options: IdempotentClientOptions) => new IdempotentHttpClient(options),
  },
];
