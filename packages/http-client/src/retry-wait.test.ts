import { CallBudget } from './call-budget';
import { refuseWait } from './retry-wait';

describe('refuseWait', () => {
  const noDeadline = CallBudget.start(0);
  const deadline1s = CallBudget.start(0, 1000);

  it('lets a backoff or a Retry-After within both limits be slept', () => {
    expect(refuseWait({ ms: 500, retryAfter: false }, 30_000, deadline1s, 0)).toBeUndefined();
    expect(refuseWait({ ms: 30_000, retryAfter: true }, 30_000, noDeadline, 0)).toBeUndefined();
  });

  it('refuses a Retry-After above the cap, even with no deadline, and even when the deadline also forbids it', () => {
    expect(refuseWait({ ms: 30_001, retryAfter: true }, 30_000, noDeadline, 0)).toBe('too-long');
    expect(refuseWait({ ms: 3_600_000, retryAfter: true }, 30_000, deadline1s, 0)).toBe('too-long');
    expect(refuseWait({ ms: Number.POSITIVE_INFINITY, retryAfter: true }, 30_000, noDeadline, 0)).toBe('too-long');
  });

  it('caps only what the server asked for: the backoff has its own maxMs', () => {
    expect(refuseWait({ ms: 60_000, retryAfter: false }, 30_000, noDeadline, 0)).toBeUndefined();
  });

  it('refuses any wait that reaches the deadline, measured from now', () => {
    expect(refuseWait({ ms: 1000, retryAfter: true }, 30_000, deadline1s, 0)).toBe('deadline');
    expect(refuseWait({ ms: 400, retryAfter: false }, 30_000, deadline1s, 600)).toBe('deadline');
    expect(refuseWait({ ms: 399, retryAfter: false }, 30_000, deadline1s, 600)).toBeUndefined();
  });
});
