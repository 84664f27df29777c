import { createParamDecorator } from '@nestjs/common';
import { currentExecution } from '../current-execution';

/**
 * Parameter decorator handing an `@Idempotent` handler its `Execution`
 * (see `currentExecution`); `undefined` when the request runs unprotected.
 *
 * @example
 * @Post('charges')
 * @Idempotent('payments.charge')
 * charge(@Body() body: ChargeDto, @CurrentExecution() execution?: Execution) {
 *   return this.ledger.charge(body, { recordKey: execution?.recordKey, epoch: execution?.epoch });
 * }
 */
export const CurrentExecution = createParamDecorator(() => currentExecution());
