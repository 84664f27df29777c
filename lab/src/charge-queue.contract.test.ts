// Pins the queue contract of orders' copy and of payments' copy to each other and to the one the lab and
// the scenarios declare (`@idempotency-chain/api`). It lives here, beside all three, rather than in either
// app: a copy of orders or payments outside this repository has no such package, and keeps its contract in
// step with its own other end.
import * as api from '@idempotency-chain/api';
import * as orders from '@idempotency-chain/orders';
import * as payments from '@idempotency-chain/payments/queue';

describe('the charge queue contract', () => {
  it('is the same for the orders that publishes, the payments that consumes, and the lab', () => {
    expect([orders.CHARGE_PATTERN, payments.CHARGE_PATTERN]).toEqual([api.CHARGE_PATTERN, api.CHARGE_PATTERN]);
    const options = api.chargeQueueOptions('q.charges');
    expect([orders.chargeQueueOptions('q.charges'), payments.chargeQueueOptions('q.charges')]).toEqual([options, options]);
    expect(payments.deadLetterQueue('q.charges')).toBe(api.deadLetterQueue('q.charges'));
    // The header orders puts payments' service token in, and the one payments reads it from.
    expect(orders.CHARGE_TOKEN_HEADER).toBe(payments.CHARGE_TOKEN_HEADER);
  });
});
