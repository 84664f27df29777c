import type { LabEvent } from '@idempotency-chain/scenarios';
import { answersOf } from './answers';

const T0 = 1_800_000_000_000;

function attempt(service: LabEvent['service'], at: number, durationMs: number, fields: Partial<LabEvent> = {}): LabEvent {
  return {
    service,
    event: 'attempt',
    time: T0 + at + durationMs,
    startedAt: T0 + at,
    durationMs,
    attempt: 1,
    outcome: 'ok',
    status: 201,
    ...fields,
  };
}

describe('the caller’s answers', () => {
  it('names each press, in the order they started, and leaves the unanswered ones pending', () => {
    const events = [attempt('caller', 0, 1300, { outcome: 'http-error', status: 502 })];
    expect(answersOf(events, ['Pay', 'Press again'])).toEqual([
      { label: 'Pay', pending: false, status: 502, text: '502 Bad Gateway after 1300 ms' },
      { label: 'Press again', pending: true, text: 'waiting for an answer' },
    ]);
  });

  it('says what came back when no status did', () => {
    const events = [
      attempt('caller', 0, 3000, { outcome: 'timeout', status: undefined }),
      attempt('caller', 4000, 12, { outcome: 'reset', status: undefined }),
    ];
    expect(answersOf(events, ['Pay', 'Press again']).map((a) => a.text)).toEqual([
      'no answer within the caller’s budget after 3000 ms',
      'reply lost (connection closed) after 12 ms',
    ]);
  });

  it('credits a replay to the outermost hop that answered from its store during the press', () => {
    const events = [
      attempt('caller', 0, 1300, { outcome: 'http-error', status: 502 }),
      // A replay by payments during the first press, answering a retry of orders.
      attempt('orders', 900, 20, { replayed: true }),
      attempt('caller', 3000, 80),
      attempt('gateway', 3005, 60),
      attempt('orders', 3010, 20, { replayed: true }),
    ];
    const [first, second] = answersOf(events, ['Pay', 'Press again']);
    expect(first?.replayedBy).toBe('payments');
    expect(second?.replayedBy).toBe('payments');
    const gatewayReplay = [...events, attempt('gateway', 3020, 10, { replayed: true })];
    expect(answersOf(gatewayReplay, ['Pay', 'Press again'])[1]?.replayedBy).toBe('orders');
  });

  it('judges concurrent clicks by their own answer only: their time is shared', () => {
    const events = [
      attempt('caller', 0, 1300, { outcome: 'http-error', status: 502 }),
      attempt('caller', 1, 1500, { replayed: true }),
      attempt('caller', 2, 1500),
      attempt('orders', 900, 20, { replayed: true }),
    ];
    expect(answersOf(events, ['Click 1', 'Click 2', 'Click 3']).map((a) => a.replayedBy)).toEqual([undefined, 'gateway', undefined]);
  });
});
