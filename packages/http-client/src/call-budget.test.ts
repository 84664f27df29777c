import { CallBudget } from './call-budget';

describe('CallBudget', () => {
  it('has no deadline unless one is given', () => {
    const budget = CallBudget.start(1000);
    expect(budget.deadline).toBeUndefined();
    expect(budget.attemptTimeout(2000, 1000)).toEqual({ ms: 2000, byDeadline: false });
    expect(budget.allows(60_000, 1000)).toBe(true);
  });

  it('takes the sooner of its own budget and the inbound deadline, and says which', () => {
    expect(CallBudget.start(1000, 500, 2000)).toMatchObject({ deadline: 1500, limit: 'deadline' });
    expect(CallBudget.start(1000, 5000, 2000)).toMatchObject({ deadline: 2000, limit: 'inbound-deadline' });
    expect(CallBudget.start(1000, undefined, 2000)).toMatchObject({ deadline: 2000, limit: 'inbound-deadline' });
  });

  it('clips an attempt to what is left, and flags the clip', () => {
    const budget = CallBudget.start(0, 1000);
    expect(budget.attemptTimeout(400, 0)).toEqual({ ms: 400, byDeadline: false });
    expect(budget.attemptTimeout(400, 700)).toEqual({ ms: 300, byDeadline: true });
    expect(budget.remaining(1200)).toBe(0);
  });

  it('allows no wait that reaches the deadline', () => {
    const budget = CallBudget.start(0, 1000);
    expect(budget.allows(999, 0)).toBe(true);
    expect(budget.allows(1000, 0)).toBe(false);
  });
});
