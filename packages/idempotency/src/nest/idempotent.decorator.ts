import { SetMetadata } from '@nestjs/common';
import type { Execution } from '../execution';
import { executionParameters } from './current-execution.decorator';
import { IdempotencyCallParam, IdempotencyCallPipe, isIdempotencyCall } from './idempotency-call';
import { GRAPHQL_METADATA, IDEMPOTENT_METADATA, NEST_METADATA, RPC_PATTERN_METADATA } from './idempotency.constants';
import { checkKeyMode, checkScope, type IdempotentOptions } from './idempotency.options';
import { declarationOf, registerDeclaration, type IdempotentDeclaration } from './idempotent-declaration';

type Handler = (...args: unknown[]) => unknown;

/**
 * Protect a route (or message handler) with an idempotency key: the first
 * request with a key executes, a duplicate waits for it or gets 409, a
 * completed one is replayed byte for byte, a key reused for another request
 * gets 422. The module of the controller must import `IdempotencyModule`.
 * Its policy is resolved and checked at boot.
 *
 * The handler is wrapped: guards and pipes run first (a request they
 * refuse never claims its key), then the claim, then the handler, whose
 * own return or throw ends the execution - an app's timeout interceptor
 * answering first never frees the key while the handler may still charge.
 * On a class, every route of the class (its own and those it inherits) is
 * protected, under the same operation; a subclass with routes of its own
 * needs its own `@Idempotent` (checked at boot).
 *
 * @param operation What the route does, e.g. `payments.charge`: part of the record's identity.
 * @param options Key mode, fingerprinted fields, scope, and policy over the operation's.
 * @example
 * @Post('charges')
 * @Idempotent('payments.charge', { inFlight: 'reject', fingerprintFields: ['orderId', 'amountCents'] })
 * charge(@Body() body: ChargeDto) { ... }
 *
 * @public
 */
export function Idempotent(operation: string, options: IdempotentOptions = {}): MethodDecorator & ClassDecorator {
  const { keyMode, fingerprintFields, scope, ...policy } = options;
  if (keyMode !== undefined) checkKeyMode(keyMode, `@Idempotent('${operation}')`);
  if (scope !== undefined) checkScope(scope, `@Idempotent('${operation}')`);
  const declared = { operation, keyMode, fingerprintFields, scope, policy };
  // Read at boot only to find a route that inherits a class-level `@Idempotent` it does not get.
  const mark = SetMetadata(IDEMPOTENT_METADATA, operation);
  return (target: object, key?: string | symbol, descriptor?: PropertyDescriptor): void => {
    if (descriptor) {
      // Replaced in place: the decorators applied after this one see the wrapper.
      descriptor.value = protect(target, { name: key as string, ...declared }, descriptor.value as Handler);
      mark(target, key as string | symbol, descriptor);
      return;
    }
    mark(target as Function);
    protectRoutesOf(target as Function, declared);
  };
}

/** Wrap every route handler a controller class has, inherited ones included, on its own prototype. */
function protectRoutesOf(controller: Function, declared: Omit<IdempotentDeclaration, 'name'>): void {
  const prototype = controller.prototype as Record<string, unknown>;
  for (const name of methodNames(prototype)) {
    const handler = prototype[name];
    if (typeof handler !== 'function' || declarationOf(prototype, name)) continue;
    const isRoute =
      Reflect.hasOwnMetadata(NEST_METADATA.path, handler) ||
      Reflect.hasOwnMetadata(RPC_PATTERN_METADATA, handler) ||
      Reflect.getOwnMetadata(GRAPHQL_METADATA.resolverType, handler) === 'Mutation';
    if (!isRoute || Reflect.hasOwnMetadata(NEST_METADATA.sse, handler)) continue;
    Object.defineProperty(prototype, name, {
      value: protect(prototype, { name, ...declared }, handler as Handler),
      configurable: true,
      writable: true,
    });
  }
}

/**
 * `handler` wrapped: it gets a hidden last argument (see `IdempotencyCall`)
 * through which the module's runner claims, replays or executes. Everything
 * Nest reads off a handler (route, status code, guards, interceptors...) is
 * copied onto the wrapper.
 */
function protect(prototype: object, declaration: IdempotentDeclaration, handler: Handler): Handler {
  const { name } = declaration;
  const args = (Reflect.getMetadata(NEST_METADATA.routeArguments, prototype.constructor, name) ?? {}) as Record<string, { index: number }>;
  const declared = Object.values(args);
  const executions = executionParameters(prototype, name);
  const index = Math.max(handler.length, ...declared.map((arg) => arg.index + 1), ...executions.map((at) => at + 1));
  // A message handler without parameter decorators gets (data, context); once
  // it has one (ours), Nest passes only decorated ones: give it both back.
  const implicit = declared.length === 0;
  IdempotencyCallParam(undefined, IdempotencyCallPipe)(prototype, name, index);
  const withExecution = (received: unknown[], execution: Execution | undefined): unknown[] => {
    for (const at of executions) received[at] = execution;
    return received;
  };
  const wrapper = function (this: unknown, ...received: unknown[]): unknown {
    // Nest always passes the hidden argument; a direct call (a unit test of the controller) does not.
    const viaNest = received.length > index;
    const call = received[index];
    received.length = index;
    if (!viaNest) return handler.apply(this, withExecution(received, undefined));
    if (!isIdempotencyCall(call)) {
      // Never run unprotected because something else changed the argument on its way.
      throw new TypeError(`@Idempotent on ${handler.name}: its hidden argument did not reach the handler (a global pipe changed it?)`);
    }
    const { context } = call;
    const own = implicit && context.getType() === 'rpc' ? [context.switchToRpc().getData(), context.switchToRpc().getContext()] : received;
    return call.runner.run(context, declaration, (execution) => handler.apply(this, withExecution(own, execution)));
  };
  for (const key of Reflect.getOwnMetadataKeys(handler)) Reflect.defineMetadata(key, Reflect.getOwnMetadata(key, handler), wrapper);
  Object.defineProperty(wrapper, 'name', { value: handler.name });
  registerDeclaration(prototype, declaration);
  return wrapper;
}

function methodNames(prototype: object): Set<string> {
  const names = new Set<string>();
  for (let level = prototype; level && level !== Object.prototype; level = Object.getPrototypeOf(level) as object) {
    for (const name of Object.getOwnPropertyNames(level)) if (name !== 'constructor') names.add(name);
  }
  return names;
}
