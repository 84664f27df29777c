const EXECUTION_PARAMETERS = 'idempotency-chain:execution-parameters';

/**
 * Parameter decorator handing an `@Idempotent` handler its `Execution`:
 * its fencing `epoch` and `recordKey` for the protected resource, its lease
 * `signal`, its store `transaction`. `undefined` when the request runs
 * unprotected. Costs nothing, unlike `currentExecution()`.
 *
 * Not a Nest parameter decorator: the execution does not exist while Nest
 * resolves parameters (before the claim), and no pipe of the app should see
 * it. The protected handler's wrapper puts it in place.
 *
 * @example
 * @Post('charges')
 * @Idempotent('payments.charge')
 * charge(@Body() body: ChargeDto, @CurrentExecution() execution?: Execution) {
 *   return this.ledger.charge(body, { recordKey: execution?.recordKey, epoch: execution?.epoch });
 * }
 *
 * @public
 */
export function CurrentExecution(): ParameterDecorator {
  return (target, key, index) => {
    if (key === undefined) throw new TypeError('@CurrentExecution() goes on a parameter of a route handler');
    const indexes = (Reflect.getOwnMetadata(EXECUTION_PARAMETERS, target, key) ?? []) as number[];
    Reflect.defineMetadata(EXECUTION_PARAMETERS, [...indexes, index], target, key);
  };
}

/** Where a handler declared `@CurrentExecution()` parameters. */
export function executionParameters(prototype: object, name: string): readonly number[] {
  return (Reflect.getMetadata(EXECUTION_PARAMETERS, prototype, name) ?? []) as number[];
}
