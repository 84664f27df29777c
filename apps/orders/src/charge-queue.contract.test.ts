// Pins orders' copy of the queue contract to payments' (in this repository, `@idempotency-chain/api`).
// A copy of orders outside this repository drops this file, and keeps the contract in step with its payments.
import * as payments from '@idempotency-chain/api';
import { CHARGE_PATTERN, chargeQueueOptions } from './charge-queue';

describe("orders' charge queue contract", () => {
  it('is the one payments consumes', () => {
    expect(CHARGE_PATTERN).toBe(payments.CHARGE_PATTERN);
    expect(chargeQueueOptions('q.charges')).toEqual(payments.chargeQueueOptions('q.charges'));
  });
});
