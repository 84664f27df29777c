import assert from 'node:assert/strict';
import type { Execution } from '../../execution';
import type { ClaimResult } from '../../store';
import { assertMatch } from '../assert-match';
import { eventually, sleep, within } from '../async';
import { charge, claimedEpoch, neverRuns, newKey, OPERATION, SAFETY_MS, withPolicy, type AddCase, type Charge } from '../case-context';

/** Owner tokens, fencing epochs, leases and retention: what keeps a stale or dead holder out. */
export function fencingCases(it: AddCase): void {
  it('refuses complete, release and renew from a stale owner once another owner re-claimed the key', async (setup) => {
    const { store, coordinator } = await setup();
    const recordKey = coordinator.recordKey(OPERATION, '', newKey());
    const claim = (owner: string, leaseMs: number) => store.claim({ recordKey, fingerprint: 'fp', owner, leaseMs });
    const oldEpoch = claimedEpoch(await claim('owner-old', 200));
    let taken: ClaimResult | undefined;
    await eventually(async () => (taken = await claim('owner-new', 60_000)).status === 'claimed', 'the old lease to lapse');
    const newEpoch = claimedEpoch(taken);
    assert.ok(newEpoch > oldEpoch, `epoch ${newEpoch} after ${oldEpoch}`);

    assert.equal(await store.complete(recordKey, 'owner-old', '"stale"', 60_000), false);
    assert.equal(await store.release(recordKey, 'owner-old'), false);
    assert.equal(await store.renew(recordKey, 'owner-old', 1), false);

    const probe = await claim('owner-probe', 60_000);
    assertMatch(probe, { status: 'in_progress', fingerprint: 'fp' });
    assert.ok(probe.status === 'in_progress' && probe.leaseRemainingMs > 30_000, `leaseRemainingMs of ${JSON.stringify(probe)}`);
    assert.equal(await store.renew(recordKey, 'owner-new', 60_000), true);
    assert.equal(await store.complete(recordKey, 'owner-new', '"fresh"', 60_000), true);
    const replay = await claim('owner-probe', 60_000);
    assertMatch(replay, { status: 'completed', fingerprint: 'fp', result: '"fresh"' });
    assert.equal(typeof (replay.status === 'completed' && replay.remainingMs), 'number');
  });

  it('keeps a slow live holder’s lease with the heartbeat: a duplicate waits, no second execution', async (setup) => {
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

    assert.equal(executions, 1);
    assert.equal(first.replayed, false);
    assertMatch(second, { replayed: true, waited: true, value: { body: { chargeId: 'ch_slow' } } });
    assert.equal(recorder.count('lease_lost'), 0);
  });

  it('frees a crashed holder’s key after one lease: the coordinator then executes with a greater epoch', async (setup) => {
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

    assertMatch(result, { replayed: false, value: { body: { chargeId: 'ch_after_crash' } } });
    assert.ok((result.epoch ?? 0) > crashedEpoch, `epoch ${result.epoch} after the crashed ${crashedEpoch}`);
    assert.ok(startedAt - claimedAt >= 150, `ran ${startedAt - claimedAt} ms after the crashed claim, before its lease ran out`);
    assert.equal(await store.complete(recordKey, 'crashed-holder', '"late"', 60_000), false);
    assertMatch(await coordinator.run(request, neverRuns), { replayed: true, value: result.value });
  });

  it('replays within retention and re-executes once the retention has expired', async (setup) => {
    const { coordinator } = await setup();
    const request = charge(newKey(), withPolicy({ retentionMs: 500 }));
    const epochs: number[] = [];
    const action = async ({ epoch }: Execution): Promise<Charge> => {
      epochs.push(epoch);
      return { statusCode: 201, body: { chargeId: `ch_${epochs.length}` } };
    };
    assertMatch(await coordinator.run(request, action), { replayed: false });
    assertMatch(await coordinator.run(request, action), { replayed: true, value: { body: { chargeId: 'ch_1' } } });
    await eventually(async () => !(await coordinator.run(request, action)).replayed, 'the retention to expire');
    assert.equal(epochs.length, 2);
    assert.ok((epochs[1] as number) > (epochs[0] as number), `epochs ${epochs.join(', ')}`);
  });

  it('hands out positive epochs that strictly increase across expiry, release and retention', async (setup) => {
    const { store, coordinator } = await setup();
    const request = charge(newKey(), withPolicy({ retentionMs: 300 }));
    const recordKey = coordinator.recordKey(OPERATION, '', request.key);
    const epochs = [claimedEpoch(await store.claim({ recordKey, fingerprint: request.fingerprint, owner: 'crashed', leaseMs: 200 }))];
    // lease expiry -> reclaim (the coordinator waits out the lease), then a release
    await assert.rejects(
      coordinator.run(request, async ({ epoch }) => {
        epochs.push(epoch);
        throw new Error('transient');
      }),
      /transient/,
    );
    // release -> reclaim, completed with a short retention
    const complete = async ({ epoch }: Execution) => {
      epochs.push(epoch);
      return { statusCode: 201 };
    };
    await coordinator.run(request, complete);
    // retention expiry -> reclaim
    await eventually(async () => !(await coordinator.run(request, complete)).replayed, 'the retention to expire');

    assert.equal(epochs.length, 4);
    assert.ok((epochs[0] as number) > 0, `first epoch ${epochs[0]}`);
    for (let i = 1; i < epochs.length; i += 1) assert.ok((epochs[i] as number) > (epochs[i - 1] as number), `epochs ${epochs.join(', ')}`);
  });
}
