import { applyDecorators, SetMetadata, UseInterceptors } from '@nestjs/common';
import { IDEMPOTENT_METADATA } from './idempotency.constants';
import { IdempotencyInterceptor } from './idempotency.interceptor';
import type { IdempotentMetadata, IdempotentOptions } from './idempotency.options';

/**
 * Protect a route (or message handler) with an idempotency key: the first
 * request with a key executes, a duplicate waits for it or gets 409, a
 * completed one is replayed byte for byte, a key reused for another request
 * gets 422. Applies `IdempotencyInterceptor` itself, so this is the only
 * decorator needed; the module of the controller must import
 * `IdempotencyModule`. Its policy is resolved and checked at boot.
 *
 * @param operation What the route does, e.g. `payments.charge`: part of the record's identity.
 * @param options Key mode, fingerprinted fields, scope, and policy over the operation's.
 * @example
 * @Post('charges')
 * @Idempotent('payments.charge', { inFlight: 'reject', fingerprintFields: ['orderId', 'amountCents'] })
 * charge(@Body() body: ChargeDto) { ... }
 */
export function Idempotent(operation: string, options: IdempotentOptions = {}): MethodDecorator & ClassDecorator {
  const { keyMode, fingerprintFields, scope, ...policy } = options;
  const metadata: IdempotentMetadata = { operation, keyMode, fingerprintFields, scope, policy };
  return applyDecorators(SetMetadata(IDEMPOTENT_METADATA, metadata), UseInterceptors(IdempotencyInterceptor));
}
