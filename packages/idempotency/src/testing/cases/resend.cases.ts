import assert from 'node:assert/strict';
import { assertMatch } from '../assert-match';
import { claimedEpoch, newKey, OPERATION, type AddCase, type Setup } from '../case-context';

const LONG = 60_000;

/** A key claimed by `owner` with a long lease, and a claim call for any owner. */
async function claimed(setup: Setup) {
  const { store, coordinator } = await setup();
  const recordKey = coordinator.recordKey(OPERATION, '', newKey());
  const claim = (owner: string) => store.claim({ recordKey, fingerprint: 'fp', owner, leaseMs: LONG });
  const epoch = claimedEpoch(await claim('owner'));
  return { store, recordKey, claim, epoch };
}

/**
 * The same store call arriving twice from the same owner (ioredis resends a
 * command whose reply a dropped connection lost; a completion is retried
 * after a failure whose write had in fact landed) answers as the first did:
 * a stored completion is never reported as a lost lease, and a resent claim
 * never waits a whole lease for itself.
 */
export function resendCases(it: AddCase): void {
  it('answers a claim resent by its owner claimed, with the same epoch; another owner still finds it in progress', async (setup) => {
    const { claim, epoch } = await claimed(setup);
    assertMatch(await claim('owner'), { status: 'claimed', epoch });
    assertMatch(await claim('other'), { status: 'in_progress', fingerprint: 'fp' });
    assertMatch(await claim('owner'), { status: 'claimed', epoch });
  });

  it('answers a completion sent twice by its owner true both times, and keeps the first result', async (setup) => {
    const { store, recordKey, claim } = await claimed(setup);
    assert.equal(await store.complete(recordKey, 'owner', '"first"', LONG), true);
    assert.equal(await store.complete(recordKey, 'owner', '"second"', LONG), true);
    assert.equal(await store.complete(recordKey, 'other', '"stranger"', LONG), false);
    const replay = await claim('other');
    assertMatch(replay, { status: 'completed', fingerprint: 'fp', result: '"first"' });
    assert.equal(typeof (replay.status === 'completed' && replay.remainingMs), 'number');
    // A claim resent by the owner after its own completion gets the result, like anyone.
    assertMatch(await claim('owner'), { status: 'completed', result: '"first"' });
  });

  it('answers a renewal sent twice true both times, and one arriving after the owner completed true without a change', async (setup) => {
    const { store, recordKey, claim } = await claimed(setup);
    assert.equal(await store.renew(recordKey, 'owner', LONG), true);
    assert.equal(await store.renew(recordKey, 'owner', LONG), true);
    assert.equal(await store.renew(recordKey, 'other', LONG), false);
    assert.equal(await store.complete(recordKey, 'owner', '"done"', 5 * LONG), true);
    assert.equal(await store.renew(recordKey, 'owner', 1), true);
    assert.equal(await store.renew(recordKey, 'other', 1), false);
    const replay = await claim('other');
    // Still the retention, not the renewal's 1 ms lease.
    assertMatch(replay, { status: 'completed' });
    assert.ok(replay.status === 'completed' && (replay.remainingMs ?? 0) > LONG, `remainingMs of ${JSON.stringify(replay)}`);
  });

  it('refuses a release of a completed record, even from its owner, and changes nothing', async (setup) => {
    const { store, recordKey, claim } = await claimed(setup);
    assert.equal(await store.complete(recordKey, 'owner', '"done"', LONG), true);
    assert.equal(await store.release(recordKey, 'owner'), false);
    assertMatch(await claim('other'), { status: 'completed', result: '"done"' });
  });

  it('answers a release sent twice by its owner true both times, until another owner claims the key', async (setup) => {
    const { store, recordKey, claim, epoch } = await claimed(setup);
    assert.equal(await store.release(recordKey, 'owner'), true);
    assert.equal(await store.release(recordKey, 'owner'), true);
    assert.equal(await store.release(recordKey, 'other'), false);
    const next = claimedEpoch(await claim('next'));
    assert.ok(next > epoch, `epoch ${next} after ${epoch}`);
    // Now the old owner's release is a stale one: refused, and the new claim stands.
    assert.equal(await store.release(recordKey, 'owner'), false);
    assertMatch(await claim('probe'), { status: 'in_progress' });
  });
}
