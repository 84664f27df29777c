// Pins orders' copy of the queue contract to payments' (`@idempotency-chain/api`). It lives here, beside
// both, rather than in apps/orders: a copy of orders outside this repository has no such package, and keeps
// the contract in step with its own payments.
import * as payments from '@idempotency-chain/api';
import { CHARGE_PATTERN, chargeQueueOptions } from '@idempotency-chain/orders';

describe("orders' charge queue contract", () => {
  it('is the one payments consumes', () => {
    expect(CHARGE_PATTERN).toBe(payments.CHARGE_PATTERN);
    expect(chargeQueueOptions('q.charges')).toEqual(payments.chargeQueueOptions('q.charges'));
  });
});
