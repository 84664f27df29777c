import { createParamDecorator, Injectable, type ExecutionContext, type PipeTransform } from '@nestjs/common';
import { IdempotencyRunner } from './idempotency.runner';

/** What a protected handler receives as its hidden last argument: the request's context, and who runs it. */
export interface IdempotencyCall {
  readonly context: ExecutionContext;
  readonly runner: IdempotencyRunner;
}

/**
 * Resolves the hidden argument in the controller's own module, like any
 * pipe: the runner of the `IdempotencyModule` that module imports.
 */
@Injectable()
export class IdempotencyCallPipe implements PipeTransform<ExecutionContext, IdempotencyCall> {
  constructor(private readonly runner: IdempotencyRunner) {}

  transform(context: ExecutionContext): IdempotencyCall {
    return { context, runner: this.runner };
  }
}

/**
 * The hidden parameter `@Idempotent` adds after a handler's own: Nest hands
 * it the request's `ExecutionContext`, after guards and pipes ran, with no
 * interceptor in between (an interceptor costs every request more than the
 * whole claim does).
 */
export const IdempotencyCallParam = createParamDecorator((_data: unknown, context: ExecutionContext) => context);

/** Whether `value` is the hidden argument (a global pipe may have seen it first). */
export function isIdempotencyCall(value: unknown): value is IdempotencyCall {
  return typeof value === 'object' && value !== null && (value as IdempotencyCall).runner instanceof IdempotencyRunner;
}
