import { createParamDecorator } from '@nestjs/common';
import type { Execution } from '../execution';

/**
 * Stands in for the execution while Nest resolves a handler's parameters,
 * which happens before the key is claimed; the protected handler's wrapper
 * puts the execution in its place (see `withExecution`).
 */
const EXECUTION_PLACEHOLDER = Symbol('idempotency-chain.current-execution');

/**
 * Parameter decorator handing an `@Idempotent` handler its `Execution`:
 * its fencing `epoch` and `recordKey` for the protected resource, its lease
 * `signal`, its store `transaction`. `undefined` when the request runs
 * unprotected. Costs nothing, unlike `currentExecution()`.
 *
 * @example
 * @Post('charges')
 * @Idempotent('payments.charge')
 * charge(@Body() body: ChargeDto, @CurrentExecution() execution?: Execution) {
 *   return this.ledger.charge(body, { recordKey: execution?.recordKey, epoch: execution?.epoch });
 * }
 */
export const CurrentExecution = createParamDecorator(() => EXECUTION_PLACEHOLDER);

/** `args` with each `@CurrentExecution()` placeholder replaced by `execution`. */
export function withExecution(args: unknown[], execution: Execution | undefined): unknown[] {
  for (let i = 0; i < args.length; i++) if (args[i] === EXECUTION_PLACEHOLDER) args[i] = execution;
  return args;
}
