// Pins payments' copy of the queue contract to the one orders publishes on (in this repository, `@idempotency-chain/api`).
// A copy of payments outside this repository drops this file, and keeps the contract in step with its orders.
import * as contract from '@idempotency-chain/api';
import { CHARGE_PATTERN, chargeQueueOptions, deadLetterQueue } from './charge-queue';

describe("payments' charge queue contract", () => {
  it('is the one orders publishes on', () => {
    expect(CHARGE_PATTERN).toBe(contract.CHARGE_PATTERN);
    expect(chargeQueueOptions('q.charges')).toEqual(contract.chargeQueueOptions('q.charges'));
    expect(deadLetterQueue('q.charges')).toBe(contract.deadLetterQueue('q.charges'));
  });
});
