import { isFinalOutcome } from './outcome';
import { DEFAULT_POLICY, resolvePolicy } from './policy';

describe('resolvePolicy', () => {
  it('starts from the defaults', () => {
    expect(resolvePolicy()).toEqual({
      retentionMs: 24 * 60 * 60 * 1000,
      leaseMs: 10_000,
      heartbeatMs: 3_333,
      inFlight: 'wait',
      maxWaitMs: 30_000,
      maxWaitersPerKey: 1_000,
      onStoreFailure: 'fail-closed',
      isFinal: isFinalOutcome,
    });
  });

  it('layers service defaults, operation and route, later layers winning field by field', () => {
    const policy = resolvePolicy(
      { retentionMs: 1_000, inFlight: 'reject', maxWaitMs: 5_000 },
      { retentionMs: 2_000, onStoreFailure: 'fail-open' },
      undefined,
      { retentionMs: 3_000, inFlight: 'wait' },
    );
    expect(policy).toMatchObject({ retentionMs: 3_000, inFlight: 'wait', maxWaitMs: 5_000, onStoreFailure: 'fail-open' });
  });

  it('takes a custom outcome rule', () => {
    const isFinal = () => true;
    expect(resolvePolicy({ isFinal }).isFinal).toBe(isFinal);
  });

  it('derives the heartbeat from the lease when none is given', () => {
    expect(resolvePolicy({ leaseMs: 300 }).heartbeatMs).toBe(100);
    expect(resolvePolicy({ leaseMs: 2_000 }, { maxWaitMs: 1 }).heartbeatMs).toBe(666);
  });

  it('keeps a heartbeat given with the lease, including 0 (off)', () => {
    expect(resolvePolicy({ leaseMs: 300, heartbeatMs: 50 }).heartbeatMs).toBe(50);
    expect(resolvePolicy({ leaseMs: 300 }, { heartbeatMs: 200 }).heartbeatMs).toBe(200);
    expect(resolvePolicy({ heartbeatMs: 0 }).heartbeatMs).toBe(0);
    expect(resolvePolicy({ heartbeatMs: 0 }, { leaseMs: 600 }).heartbeatMs).toBe(0);
  });

  it('re-derives a heartbeat chosen for a less specific layer’s lease when a later layer shortens the lease', () => {
    // Service: 10 s lease, beat every 2 s. Operation: 600 ms lease, no heartbeat:
    // a 2 s beat could never keep a 600 ms lease alive.
    expect(resolvePolicy({ leaseMs: 10_000, heartbeatMs: 2_000 }, { leaseMs: 600 }).heartbeatMs).toBe(200);
  });

  it('ignores fields present but undefined, so they never erase a default or an earlier layer', () => {
    const policy = resolvePolicy({ retentionMs: 5_000 }, { retentionMs: undefined, leaseMs: undefined, inFlight: undefined });
    expect(policy).toMatchObject({ retentionMs: 5_000, leaseMs: 10_000, heartbeatMs: 3_333, inFlight: 'wait' });
  });

  it('leaves DEFAULT_POLICY and the layers untouched', () => {
    const layer = { leaseMs: 300 };
    resolvePolicy(layer);
    expect(layer).toEqual({ leaseMs: 300 });
    expect(Object.isFrozen(DEFAULT_POLICY)).toBe(true);
    expect(DEFAULT_POLICY.leaseMs).toBe(10_000);
  });
});
