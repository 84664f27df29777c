import { SETUP } from '@idempotency-chain/scenarios';
import { faultPlans, WRITE_UP_FAULTS } from './faults';

describe('fault plans', () => {
  it('arm the write-up’s faults where the write-up arms them', () => {
    expect(faultPlans(WRITE_UP_FAULTS)).toEqual({
      gateway: {},
      orders: { loseReplies: 1 },
      payments: { slowFirstAttemptMs: SETUP.slowFirstAttemptMs },
    });
  });

  it('give every service a plan, an empty one disarming what an earlier press left', () => {
    expect(faultPlans({ slowFirstAttempt: false, lostReplies: [], paymentsCrash: false, storeDown: true })).toEqual({
      gateway: {},
      orders: {},
      payments: {},
    });
  });

  it('lose a reply at each hop chosen, and kill payments after the charge', () => {
    const plans = faultPlans({ slowFirstAttempt: false, lostReplies: ['gateway', 'payments'], paymentsCrash: true, storeDown: false });
    expect(plans).toEqual({ gateway: { loseReplies: 1 }, orders: {}, payments: { loseReplies: 1, crashAfterSideEffect: 1 } });
  });
});
