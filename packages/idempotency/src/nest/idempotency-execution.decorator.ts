import { createParamDecorator } from '@nestjs/common';
import { currentExecution } from './idempotency-execution';

/**
 * Parameter decorator handing an `@Idempotent` handler its execution (see
 * `currentExecution`); `undefined` when the request runs unprotected.
 *
 * @example
 * @Post('charges')
 * @Idempotent('payments.charge')
 * charge(@Body() body: ChargeDto, @IdempotencyExecution() execution?: IdempotentExecution) {
 *   return this.ledger.charge(body, execution?.epoch ?? 0);
 * }
 */
export const IdempotencyExecution = createParamDecorator(() => currentExecution());
