import { SetMetadata, UseInterceptors } from '@nestjs/common';
import { trackedHandler } from './handler-run';
import { IDEMPOTENT_METADATA, NEST_METADATA, RPC_PATTERN_METADATA } from './idempotency.constants';
import { IdempotencyInterceptor } from './idempotency.interceptor';
import type { IdempotentMetadata, IdempotentOptions } from './idempotency.options';
import { checkKeyMode, checkScope } from './module-options';

/**
 * Protect a route (or message handler) with an idempotency key: the first
 * request with a key executes, a duplicate waits for it or gets 409, a
 * completed one is replayed byte for byte, a key reused for another request
 * gets 422. Applies `IdempotencyInterceptor` itself, so this is the only
 * decorator needed; the module of the controller must import
 * `IdempotencyModule`. Its policy is resolved and checked at boot.
 *
 * On a class, every route of the class (its own and those it inherits) is
 * protected, under the same operation. The handler is wrapped so that the
 * execution knows when it really returns: an app's timeout interceptor that
 * answers first never frees the key while the handler may still charge.
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
  if (keyMode !== undefined) checkKeyMode(keyMode, `@Idempotent('${operation}')`);
  if (scope !== undefined) checkScope(scope, `@Idempotent('${operation}')`);
  const metadata: IdempotentMetadata = { operation, keyMode, fingerprintFields, scope, policy };
  const mark = SetMetadata(IDEMPOTENT_METADATA, metadata);
  const intercept = UseInterceptors(IdempotencyInterceptor);
  return ((target: object, key?: string | symbol, descriptor?: PropertyDescriptor): void => {
    if (descriptor) {
      // Replaced in place: the decorators applied after this one see the wrapper.
      descriptor.value = trackedHandler(descriptor.value as (...args: never[]) => unknown);
      mark(target, key as string | symbol, descriptor);
      intercept(target, key as string | symbol, descriptor);
      return;
    }
    mark(target as Function);
    intercept(target as Function);
    trackRoutesOf(target as Function);
  }) as MethodDecorator & ClassDecorator;
}

/** Wrap every route handler a controller class has, inherited ones included, on its own prototype. */
function trackRoutesOf(controller: Function): void {
  const prototype = controller.prototype as Record<string, unknown>;
  for (const name of methodNames(prototype)) {
    const handler = prototype[name];
    if (typeof handler !== 'function') continue;
    const isRoute = Reflect.hasOwnMetadata(NEST_METADATA.path, handler) || Reflect.hasOwnMetadata(RPC_PATTERN_METADATA, handler);
    if (!isRoute || Reflect.hasOwnMetadata(NEST_METADATA.sse, handler)) continue;
    Object.defineProperty(prototype, name, { value: trackedHandler(handler as (...args: never[]) => unknown), configurable: true, writable: true });
  }
}

function methodNames(prototype: object): Set<string> {
  const names = new Set<string>();
  for (let level = prototype; level && level !== Object.prototype; level = Object.getPrototypeOf(level) as object) {
    for (const name of Object.getOwnPropertyNames(level)) if (name !== 'constructor') names.add(name);
  }
  return names;
}
