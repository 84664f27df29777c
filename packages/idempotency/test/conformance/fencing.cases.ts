import type { Execution } from '../../src/execution';
import type { ClaimResult } from '../../src/store';
import { eventually, sleep, within } from '../support/async';
import { charge, claimedEpoch, neverRuns, newKey, OPERATION, SAFETY_MS, withPolicy, type Charge, type ConformanceContext } from './context';

/** Owner tokens, fencing epochs, leases and retention: what keeps a stale or dead holder out. */
export function describeFencingCases({ setup }: ConformanceContext): void {
  it('refuses complete, release and renew from a stale owner once another owner re-claimed the key', async () => {
    const { store, coordinator } = await setup();
    const recordKey = coordinator.recordKey(OPERATION, '', newKey());
    const claim = (owner: string, leaseMs: number) => store.claim({ recordKey, fingerprint: 'fp', owner, leaseMs });
    const oldEpoch = claimedEpoch(await claim('owner-old', 200));
    let taken: ClaimResult | undefined;
    await eventually(async () => (taken = await claim('owner-new', 60_000)).status === 'claimed', 'the old lease to lapse');
    const newEpoch = claimedEpoch(taken);
    expect(newEpoch).toBeGreaterThan(oldEpoch);

    expect(await store.complete(recordKey, 'owner-old', '"stale"', 60_000)).toBe(false);
    expect(await store.release(recordKey, 'owner-old')).toBe(false);
    expect(await store.renew(recordKey, 'owner-old', 1)).toBe(false);

    const probe = await claim('owner-probe', 60_000);
    expect(probe).toMatchObject({ status: 'in_progress', fingerprint: 'fp' });
    expect(probe.status === 'in_progress' && probe.leaseRemainingMs).toBeGreaterThan(30_000);
    expect(await store.renew(recordKey, 'owner-new', 60_000)).toBe(true);
    expect(await store.complete(recordKey, 'owner-new', '"fresh"', 60_000)).toBe(true);
    expect(await claim('owner-probe', 60_000)).toEqual({
      status: 'completed',
      fingerprint: 'fp',
      result: '"fresh"',
      remainingMs: expect.any(Number),
    });
  });

  it('keeps a slow live holder’s lease with the heartbeat: a duplicate waits, no second execution', async () => {
    const { coordinator, recorder } = await setup();
    const request = charge(newKey(), withPolicy({ leaseMs: 300, heartbeatMs: 100 }));
    let executions = 0;
    const winner = coordinator.run(request, async (): Promise<Charge> => {
      executions += 1;
      await sleep(1_200); // four leases
      return { statusCode: 201, body: { chargeId: 'ch_slow' } };
    });
    await eventually(() => executions === 1, 'the holder to start');
    await sleep(650); // two leases in: without renewals the key would be free by now
    const duplicate = coordinator.run(request, async (): Promise<Charge> => {
      executions += 1;
      return { statusCode: 201, body: { chargeId: 'ch_duplicate' } };
    });
    const [first, second] = await within(Promise.all([winner, duplicate]), 10_000, 'holder and duplicate');

    expect(executions).toBe(1);
    expect(first.replayed).toBe(false);
    expect(second).toMatchObject({ replayed: true, waited: true, value: { body: { chargeId: 'ch_slow' } } });
    expect(recorder.count('lease_lost')).toBe(0);
  });

  it('frees a crashed holder’s key after one lease: the coordinator then executes with a greater epoch', async () => {
    const { store, coordinator } = await setup();
    const request = charge(newKey());
    const recordKey = coordinator.recordKey(OPERATION, '', request.key);
    const claimedAt = Date.now();
    const crashedEpoch = claimedEpoch(
      await store.claim({ recordKey, fingerprint: request.fingerprint, owner: 'crashed-holder', leaseMs: 200 }),
    );
    let startedAt = 0;
    const result = await within(
      coordinator.run(request, async ({ epoch }): Promise<Charge> => {
        startedAt = Date.now();
        return { statusCode: 201, body: { chargeId: 'ch_after_crash', epoch } };
      }),
      SAFETY_MS,
      'the run after the crashed lease',
    );

    expect(result).toMatchObject({ replayed: false, value: { body: { chargeId: 'ch_after_crash' } } });
    expect(result.epoch).toBeGreaterThan(crashedEpoch);
    expect(startedAt - claimedAt).toBeGreaterThanOrEqual(150); // not before the lease ran out
    expect(await store.complete(recordKey, 'crashed-holder', '"late"', 60_000)).toBe(false);
    expect(await coordinator.run(request, neverRuns)).toMatchObject({ replayed: true, value: result.value });
  });

  it('replays within retention and re-executes once the retention has expired', async () => {
    const { coordinator } = await setup();
    const request = charge(newKey(), withPolicy({ retentionMs: 500 }));
    const epochs: number[] = [];
    const action = async ({ epoch }: Execution): Promise<Charge> => {
      epochs.push(epoch);
      return { statusCode: 201, body: { chargeId: `ch_${epochs.length}` } };
    };
    expect(await coordinator.run(request, action)).toMatchObject({ replayed: false });
    expect(await coordinator.run(request, action)).toMatchObject({ replayed: true, value: { body: { chargeId: 'ch_1' } } });
    await eventually(async () => !(await coordinator.run(request, action)).replayed, 'the retention to expire');
    expect(epochs).toHaveLength(2);
    expect(epochs[1]).toBeGreaterThan(epochs[0] as number);
  });

  it('hands out positive epochs that strictly increase across expiry, release and retention', async () => {
    const { store, coordinator } = await setup();
    const request = charge(newKey(), withPolicy({ retentionMs: 300 }));
    const recordKey = coordinator.recordKey(OPERATION, '', request.key);
    const epochs = [claimedEpoch(await store.claim({ recordKey, fingerprint: request.fingerprint, owner: 'crashed', leaseMs: 200 }))];
    // lease expiry -> reclaim (the coordinator waits out the lease), then a release
    await expect(
      coordinator.run(request, async ({ epoch }) => {
        epochs.push(epoch);
        throw new Error('transient');
      }),
    ).rejects.toThrow('transient');
    // release -> reclaim, completed with a short retention
    const complete = async ({ epoch }: Execution) => {
      epochs.push(epoch);
      return { statusCode: 201 };
    };
    await coordinator.run(request, complete);
    // retention expiry -> reclaim
    await eventually(async () => !(await coordinator.run(request, complete)).replayed, 'the retention to expire');

    expect(epochs).toHaveLength(4);
    expect(epochs[0]).toBeGreaterThan(0);
    for (let i = 1; i < epochs.length; i += 1) expect(epochs[i]).toBeGreaterThan(epochs[i - 1] as number);
  });
}
