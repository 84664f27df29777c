import { createParamDecorator, Injectable, type ExecutionContext, type PipeTransform } from '@nestjs/common';
import { IdempotencyRunner } from './idempotency.runner';

/**
 * One call of a protected handler, in flight: what the handler's wrapper
 * receives as its hidden last argument, this request's context and the
 * runner of the controller's module. Not the route: what the handler was
 * declared with (`IdempotentDeclaration`) and resolved to at boot
 * (`IdempotentRoute`) is the same for every call.
 */
export interface IdempotencyCall {
  readonly context: ExecutionContext;
  readonly runner: IdempotencyRunner;
}

const CONTEXT = Symbol('idempotency-chain.context');
/** The request's context, wrapped in a function: the app's global pipes, which run first, leave functions alone. */
type ContextCarrier = (() => ExecutionContext) & { [CONTEXT]: true };

/**
 * Resolves the hidden argument in the controller's own module, like any
 * pipe: the runner of the `IdempotencyModule` that module imports.
 */
@Injectable()
export class IdempotencyCallPipe implements PipeTransform<unknown, IdempotencyCall | undefined> {
  constructor(private readonly runner: IdempotencyRunner) {}

  transform(carrier: unknown): IdempotencyCall | undefined {
    if (typeof carrier !== 'function' || !(carrier as Partial<ContextCarrier>)[CONTEXT]) return undefined;
    return { context: (carrier as ContextCarrier)(), runner: this.runner };
  }
}

/**
 * The hidden parameter `@Idempotent` adds after a handler's own: Nest hands
 * it the request's `ExecutionContext`, after guards and pipes ran, with no
 * interceptor in between (an interceptor costs every request more than the
 * whole claim does).
 */
export const IdempotencyCallParam = createParamDecorator((_data: unknown, context: ExecutionContext): ContextCarrier => {
  const carrier = (() => context) as ContextCarrier;
  carrier[CONTEXT] = true;
  return carrier;
});

/** Whether `value` is the hidden argument. */
export function isIdempotencyCall(value: unknown): value is IdempotencyCall {
  return typeof value === 'object' && value !== null && (value as IdempotencyCall).runner instanceof IdempotencyRunner;
}
