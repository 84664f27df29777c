import { Recorder } from '../test/support/recorder';
import { IdempotencyCoordinator, type RunRequest } from './coordinator';
import { isIdempotencyError, LeaseLostError } from './errors';
import { MemoryStore } from './memory-store';

/**
 * Completion when the store fails: retried with the heartbeat still on,
 * never given up on while the lease can be held, and never a second
 * execution. Fake timers: the retries' pauses and the lease pass at once.
 * Each test's lease is its own, so no heartbeat timer made under fake
 * timers is shared with a test that runs on real ones.
 */
const OPERATION = 'payments.charge';

/** A memory store whose completions fail while `failures` is above 0 (or always, at -1). */
class FlakyStore extends MemoryStore {
  completions = 0;
  renewals = 0;
  constructor(
    public failures: number,
    /** The failure happens after the write: the record is completed, its reply lost. */
    private readonly afterWrite = false,
  ) {
    super();
  }
  override async complete(recordKey: string, owner: string, result: string, retentionMs: number): Promise<boolean> {
    this.completions += 1;
    if (this.failures === 0) return super.complete(recordKey, owner, result, retentionMs);
    if (this.failures > 0) this.failures -= 1;
    if (this.afterWrite) await super.complete(recordKey, owner, result, retentionMs);
    throw new Error('ECONNRESET');
  }
  override async renew(recordKey: string, owner: string, leaseMs: number): Promise<boolean> {
    this.renewals += 1;
    return super.renew(recordKey, owner, leaseMs);
  }
}

let recorder: Recorder;
beforeEach(() => {
  vi.useFakeTimers();
  recorder = new Recorder();
});
afterEach(() => vi.useRealTimers());

function setup(store: FlakyStore, replayCache = false) {
  const coordinator = new IdempotencyCoordinator({
    service: 'payments',
    store,
    observer: recorder,
    ...(!replayCache && { replayCache: false }),
  });
  let runs = 0;
  const charge = async () => {
    runs += 1;
    return { statusCode: 201, body: { chargeId: `ch_${runs}` } };
  };
  return { coordinator, charge, runs: () => runs };
}

const request = (leaseMs: number, key = 'order-7'): RunRequest => ({ operation: OPERATION, key, fingerprint: 'fp', policy: { leaseMs } });

/** Run `promise` to its end, letting the fake clock move as far as it needs. */
async function settle<T>(promise: Promise<T>, ms = 60_000): Promise<T> {
  const settled = promise.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  await vi.advanceTimersByTimeAsync(ms);
  const outcome = await settled;
  if ('error' in outcome) throw outcome.error;
  return outcome.value;
}

describe('Execution completion when the store fails', () => {
  it('retries a completion that failed once: one execution, and the retry replays from the store', async () => {
    const store = new FlakyStore(1);
    const { coordinator, charge, runs } = setup(store);

    const first = await settle(coordinator.run(request(1_001), charge));
    const retry = await settle(coordinator.run(request(1_001), charge));

    expect(first).toMatchObject({ replayed: false, value: { body: { chargeId: 'ch_1' } } });
    expect(retry).toMatchObject({ replayed: true, value: { body: { chargeId: 'ch_1' } } });
    expect(runs()).toBe(1);
    expect(store.completions).toBe(2);
    expect(recorder.outcomes()).toEqual(['store_error', 'executed', 'replayed']);
    await store.close();
  });

  it('answers stored to a retry whose first completion landed but lost its reply', async () => {
    const store = new FlakyStore(1, true);
    const { coordinator, charge, runs } = setup(store);

    await settle(coordinator.run(request(1_002), charge));
    expect(await settle(coordinator.run(request(1_002), charge))).toMatchObject({ replayed: true });
    expect(runs()).toBe(1);
    expect(recorder.outcomes()).toEqual(['store_error', 'executed', 'replayed']);
    await store.close();
  });

  it('keeps renewing the lease while it retries: the key stays held past the lease it had when completion began', async () => {
    const store = new FlakyStore(6); // attempts at 0, 50, 150, 350, 750 and 1550 ms fail; 2550 ms stores
    const { coordinator, charge, runs } = setup(store);
    const leaseMs = 3_003;
    const recordKey = coordinator.recordKey(OPERATION, '', 'order-7');

    const first = coordinator.run({ ...request(leaseMs), policy: { leaseMs, heartbeatMs: 1_000 } }, charge);
    await vi.advanceTimersByTimeAsync(2_400);
    expect(store.completions).toBe(6);
    // Without renewals the claim's lease would have 603 ms left by now.
    const probe = await store.claim({ recordKey, fingerprint: 'fp', owner: 'probe', leaseMs });
    expect(probe.status === 'in_progress' && probe.leaseRemainingMs).toBeGreaterThan(1_500);
    expect(await settle(first)).toMatchObject({ replayed: false });
    expect(await settle(coordinator.run(request(leaseMs), charge))).toMatchObject({
      replayed: true,
      value: { body: { chargeId: 'ch_1' } },
    });

    expect(runs()).toBe(1);
    expect(store.completions).toBe(7);
    expect(recorder.count('lease_lost')).toBe(0);
    await store.close();
  });

  it('gives up after the retention of failures: completion_failed, the caller gets its answer, and this process replays it', async () => {
    const store = new FlakyStore(-1);
    const { coordinator, charge, runs } = setup(store, true);
    const failing = { ...request(1_004), policy: { leaseMs: 1_004, retentionMs: 20_000 } };

    const first = await settle(coordinator.run(failing, charge), 2_000);
    const retry = await settle(coordinator.run(failing, charge), 1_000);
    expect(coordinator.runningExecutions).toBe(1); // still trying, the key still held
    await vi.advanceTimersByTimeAsync(30_000);

    expect(first).toMatchObject({ replayed: false, value: { body: { chargeId: 'ch_1' } } });
    expect(retry).toMatchObject({ replayed: true, value: { body: { chargeId: 'ch_1' } } });
    expect(runs()).toBe(1);
    expect(recorder.count('completion_failed')).toBe(1);
    expect(recorder.outcomes().slice(-2)).toEqual(['replayed', 'completion_failed']);
    expect(coordinator.runningExecutions).toBe(0);
    await store.close();
  });

  it('goes on completing after the caller has its answer while the lease is held: another process never runs the action', async () => {
    const store = new FlakyStore(8); // fails for about 4.5 s, three leases of 1.5 s
    const { coordinator, charge, runs } = setup(store);
    const other = new IdempotencyCoordinator({ service: 'payments', store, replayCache: false });
    const policy = { leaseMs: 1_506, heartbeatMs: 500, maxWaitMs: 0 };
    const held = { ...request(1_506), policy };

    const first = await settle(coordinator.run(held, charge), 1_600);
    expect(first).toMatchObject({ replayed: false, value: { body: { chargeId: 'ch_1' } } });
    expect(coordinator.runningExecutions).toBe(1);
    // Past the lease the claim had: still held by the heartbeat, so another process is told to wait.
    await vi.advanceTimersByTimeAsync(1_600);
    await expect(other.run(held, charge)).rejects.toMatchObject({ name: 'InFlightError' });
    await vi.advanceTimersByTimeAsync(10_000);

    expect(await settle(other.run(held, charge))).toMatchObject({ replayed: true, value: { body: { chargeId: 'ch_1' } } });
    expect(runs()).toBe(1);
    expect(coordinator.runningExecutions).toBe(0);
    expect(recorder.count('completion_failed')).toBe(0);
    expect(recorder.outcomes().at(-1)).toBe('executed');
    await store.close();
  });

  it('stops retrying once the lease is lost to another owner: LeaseLostError', async () => {
    const store = new FlakyStore(-1);
    const { coordinator, charge } = setup(store);
    const leaseMs = 2_005;
    vi.spyOn(store, 'renew').mockResolvedValue(false);

    const first = settle(coordinator.run({ ...request(leaseMs), policy: { leaseMs, heartbeatMs: 500 } }, charge));
    const error = await first.catch((e: unknown) => e);

    expect(isIdempotencyError(error, LeaseLostError)).toBe(true);
    expect(recorder.count('lease_lost')).toBe(1);
    expect(recorder.count('completion_failed')).toBe(0);
    await store.close();
  });
});
