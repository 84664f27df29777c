import { eventually, latch, within } from '../test/support/async';
import { Recorder } from '../test/support/recorder';
import { IdempotencyCoordinator, type RunRequest } from './coordinator';
import { isInFlightError, isKeyReusedError, isLeaseLostError, isStoreUnavailableError } from './errors';
import { hashKey } from './fingerprint';
import { MemoryStore } from './memory-store';
import type { IdempotencyStore } from './store';

const OPERATION = 'payments.charge';
const KEY = 'order-42-attempt-key';

let store: MemoryStore;
let recorder: Recorder;
let coordinator: IdempotencyCoordinator;

beforeEach(() => {
  store = new MemoryStore();
  recorder = new Recorder();
  coordinator = new IdempotencyCoordinator({ service: 'payments', store, observer: recorder });
});
afterEach(() => store.close());

const request = (extra: Partial<RunRequest> = {}): RunRequest => ({ operation: OPERATION, key: KEY, fingerprint: 'fp-1', ...extra });
const ok = async () => ({ statusCode: 201, body: { chargeId: 'ch_1' } });
const neverRuns = async () => {
  throw new Error('this action must not run');
};

/** A store that cannot be reached. */
class UnreachableStore implements IdempotencyStore {
  private readonly down = () => Promise.reject(new Error('ECONNREFUSED'));
  claim = this.down;
  complete = this.down;
  release = this.down;
  renew = this.down;
  waitForChange = this.down;
  close = async () => undefined;
}

describe('storeKey', () => {
  it('is a SHA-256 hex hash holding none of the user’s text', () => {
    const storeKey = coordinator.storeKey(OPERATION, 'tenant-a', KEY);
    expect(storeKey).toMatch(/^[0-9a-f]{64}$/);
    expect(storeKey).not.toContain(KEY);
    expect(coordinator.storeKey(OPERATION, 'tenant-a', KEY)).toBe(storeKey);
  });

  it('changes with the service, the operation, the scope and the key', () => {
    const storeKey = coordinator.storeKey(OPERATION, 'tenant-a', KEY);
    const otherService = new IdempotencyCoordinator({ service: 'orders', store });
    expect(otherService.storeKey(OPERATION, 'tenant-a', KEY)).not.toBe(storeKey);
    expect(coordinator.storeKey('payments.refund', 'tenant-a', KEY)).not.toBe(storeKey);
    expect(coordinator.storeKey(OPERATION, 'tenant-b', KEY)).not.toBe(storeKey);
    expect(coordinator.storeKey(OPERATION, 'tenant-a', `${KEY}x`)).not.toBe(storeKey);
  });

  it('cannot be forged by moving a separator between fields', () => {
    expect(coordinator.storeKey('op', 'a:b', 'c')).not.toBe(coordinator.storeKey('op', 'a', 'b:c'));
    expect(coordinator.storeKey('op', '', 'a","b')).not.toBe(coordinator.storeKey('op', 'a', 'b'));
  });
});

describe('run', () => {
  it('isolates scopes: the same key under two scopes executes twice, under one scope once', async () => {
    let executions = 0;
    const action = async () => ({ statusCode: 201, body: { run: (executions += 1) } });
    const alice = await coordinator.run(request({ scope: 'alice' }), action);
    const bob = await coordinator.run(request({ scope: 'bob' }), action);
    const aliceAgain = await coordinator.run(request({ scope: 'alice' }), action);

    expect(executions).toBe(2);
    expect(bob).toMatchObject({ replayed: false, value: { body: { run: 2 } } });
    expect(aliceAgain).toMatchObject({ replayed: true, value: alice.value });
  });

  it('hands the action a positive epoch, a live signal and the key hash', async () => {
    const result = await coordinator.run(request(), async (context) => ({
      epoch: context.epoch,
      aborted: context.signal.aborted,
      keyHash: context.keyHash,
    }));
    expect(result.value).toEqual({ epoch: result.epoch, aborted: false, keyHash: hashKey(KEY) });
    expect(result.epoch).toBeGreaterThan(0);
  });

  it('stores a result of undefined so that its replay does not fail', async () => {
    await coordinator.run(request(), async () => undefined);
    const replay = await coordinator.run(request(), neverRuns);
    expect(replay).toMatchObject({ replayed: true });
    expect(replay.value ?? undefined).toBeUndefined();
  });

  it('takes the route’s policy over the operation’s over the service defaults', () => {
    const layered = new IdempotencyCoordinator({
      service: 'payments',
      store,
      defaults: { retentionMs: 1_000, inFlight: 'reject' },
      operations: { [OPERATION]: { retentionMs: 2_000, maxWaitMs: 50 } },
    });
    expect(layered.policyFor(OPERATION)).toMatchObject({ retentionMs: 2_000, inFlight: 'reject', maxWaitMs: 50 });
    expect(layered.policyFor(OPERATION, { inFlight: 'wait' })).toMatchObject({ retentionMs: 2_000, inFlight: 'wait' });
    expect(layered.policyFor('other.op')).toMatchObject({ retentionMs: 1_000, maxWaitMs: 30_000 });
  });
});

describe('observer events', () => {
  it('reports executed with the epoch, then replayed, with the key hash and never the key', async () => {
    const first = await coordinator.run(request(), ok);
    await coordinator.run(request(), neverRuns);
    expect(recorder.events).toEqual([
      { outcome: 'executed', service: 'payments', operation: OPERATION, keyHash: hashKey(KEY), epoch: first.epoch },
      { outcome: 'replayed', service: 'payments', operation: OPERATION, keyHash: hashKey(KEY) },
    ]);
    expect(JSON.stringify(recorder.events)).not.toContain(KEY);
  });

  it('reports waited for a duplicate answered by the execution it waited for', async () => {
    const gate = latch();
    const winner = coordinator.run(request(), async () => {
      await gate.promise;
      return ok();
    });
    const waiter = coordinator.run(request(), neverRuns);
    await eventually(() => recorder.claims >= 2, 'both claims');
    gate.open();
    expect(await waiter).toMatchObject({ replayed: true, waited: true });
    await winner;
    expect(recorder.outcomes()).toEqual(['executed', 'waited']);
  });

  it('reports mismatched and throws KeyReusedError for another fingerprint', async () => {
    await coordinator.run(request(), ok);
    const error = await coordinator.run(request({ fingerprint: 'fp-2' }), neverRuns).catch((e: unknown) => e);
    expect(isKeyReusedError(error)).toBe(true);
    expect(recorder.outcomes()).toEqual(['executed', 'mismatched']);
  });

  it('reports released for a thrown error and for a transient result', async () => {
    await expect(coordinator.run(request(), () => Promise.reject(new Error('reset')))).rejects.toThrow('reset');
    await coordinator.run(request(), async () => ({ statusCode: 502 }));
    expect(recorder.outcomes()).toEqual(['released', 'released']);
    expect(store.size).toBe(0);
  });

  it('reports rejected_in_flight under inFlight: reject', async () => {
    const gate = latch();
    const winner = coordinator.run(request(), async () => {
      await gate.promise;
      return ok();
    });
    const error = await coordinator.run(request({ policy: { inFlight: 'reject' } }), neverRuns).catch((e: unknown) => e);
    expect(isInFlightError(error) && error.retryAfterSeconds).toBe(10); // the default 10 s lease
    gate.open();
    await winner;
    expect(recorder.outcomes()).toEqual(['rejected_in_flight', 'executed']);
  });

  it('reports lease_lost and aborts the action’s signal when the heartbeat finds another owner', async () => {
    // A lease shorter than the beat, so the lease lapses and an intruder takes the key.
    const policy = { leaseMs: 100, heartbeatMs: 300 };
    let signal: AbortSignal | undefined;
    const run = coordinator.run(request({ policy }), async (context) => {
      signal = context.signal;
      await new Promise((resolve) => context.signal.addEventListener('abort', resolve, { once: true }));
      return ok();
    });
    const storeKey = coordinator.storeKey(OPERATION, '', KEY);
    await eventually(
      async () => (await store.claim({ storeKey, fingerprint: 'fp-1', owner: 'intruder', leaseMs: 60_000 })).status === 'claimed',
      'the lease to lapse',
    );

    const error = await within(run, 5_000, 'the run that lost its lease').catch((e: unknown) => e);
    expect(signal?.aborted).toBe(true);
    expect(isLeaseLostError(signal?.reason)).toBe(true);
    expect(isLeaseLostError(error)).toBe(true);
    expect(recorder.outcomes()).toEqual(['lease_lost', 'stale_completion_refused']);
    expect(await store.claim({ storeKey, fingerprint: 'fp-1', owner: 'probe', leaseMs: 1_000 })).toMatchObject({ status: 'in_progress' });
  });

  it('reports stale_completion_refused and throws LeaseLostError when completing after losing the lease', async () => {
    const storeKey = coordinator.storeKey(OPERATION, '', KEY);
    const takenOver = latch();
    const run = coordinator.run(request({ policy: { leaseMs: 100, heartbeatMs: 0 } }), async () => {
      await takenOver.promise;
      return ok();
    });
    let intruderEpoch = 0;
    await eventually(async () => {
      const claim = await store.claim({ storeKey, fingerprint: 'fp-1', owner: 'intruder', leaseMs: 60_000 });
      if (claim.status === 'claimed') intruderEpoch = claim.epoch;
      return intruderEpoch > 0;
    }, 'the lease to lapse');
    takenOver.open();

    const error = await run.catch((e: unknown) => e);
    expect(isLeaseLostError(error)).toBe(true);
    expect(recorder.outcomes()).toEqual(['stale_completion_refused']);
    expect(recorder.events[0]?.epoch).toBeLessThan(intruderEpoch);
    expect(await store.complete(storeKey, 'intruder', '"intruder"', 60_000)).toBe(true);
  });

  it('reports store_error and throws StoreUnavailableError when the store is down (fail closed)', async () => {
    const down = new IdempotencyCoordinator({ service: 'payments', store: new UnreachableStore(), observer: recorder });
    const error = await down.run(request(), neverRuns).catch((e: unknown) => e);
    expect(isStoreUnavailableError(error)).toBe(true);
    expect((error as Error).cause).toMatchObject({ message: 'ECONNREFUSED' });
    expect(recorder.outcomes()).toEqual(['store_error']);
  });

  it('reports store_error then fail_open and runs the action unprotected when the operation opts in', async () => {
    const down = new IdempotencyCoordinator({ service: 'payments', store: new UnreachableStore(), observer: recorder });
    const result = await down.run(request({ policy: { onStoreFailure: 'fail-open' } }), async ({ epoch }) => ({ epoch }));
    expect(result).toEqual({ value: { epoch: 0 }, replayed: false, waited: false });
    expect(recorder.outcomes()).toEqual(['store_error', 'fail_open']);
  });

  it('calls claimLatency once per claim with the service, the operation and a duration', async () => {
    await coordinator.run(request(), ok);
    await coordinator.run(request(), neverRuns);
    expect(recorder.latencies).toHaveLength(2);
    for (const latency of recorder.latencies) {
      expect(latency).toMatchObject({ service: 'payments', operation: OPERATION });
      expect(latency.ms).toBeGreaterThanOrEqual(0);
    }
  });
});
