import { deliveryAttempt } from './attempt';

describe('deliveryAttempt', () => {
  it('is 1 on a first delivery and 2 on a redelivery', () => {
    expect(deliveryAttempt({ fields: { deliveryTag: 1, redelivered: false }, properties: {} })).toBe(1);
    expect(deliveryAttempt({ fields: { deliveryTag: 1, redelivered: true }, properties: {} })).toBe(2);
  });
});
