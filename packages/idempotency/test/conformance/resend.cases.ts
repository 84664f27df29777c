import { claimedEpoch, newKey, OPERATION, type ConformanceContext } from './context';

/**
 * The same store call arriving twice from the same owner (ioredis resends a
 * command whose reply a dropped connection lost; a completion is retried
 * after a failure whose write had in fact landed) answers as the first did:
 * a stored completion is never reported as a lost lease, and a resent claim
 * never waits a whole lease for itself.
 */
export function describeResendCases({ setup }: ConformanceContext): void {
  const LONG = 60_000;

  async function claimed() {
    const { store, coordinator } = await setup();
    const recordKey = coordinator.recordKey(OPERATION, '', newKey());
    const claim = (owner: string) => store.claim({ recordKey, fingerprint: 'fp', owner, leaseMs: LONG });
    const epoch = claimedEpoch(await claim('owner'));
    return { store, coordinator, recordKey, claim, epoch };
  }

  it('answers a claim resent by its owner claimed, with the same epoch; another owner still finds it in progress', async () => {
    const { claim, epoch } = await claimed();
    expect(await claim('owner')).toEqual({ status: 'claimed', epoch });
    expect(await claim('other')).toMatchObject({ status: 'in_progress', fingerprint: 'fp' });
    expect(await claim('owner')).toEqual({ status: 'claimed', epoch });
  });

  it('answers a completion sent twice by its owner true both times, and keeps the first result', async () => {
    const { store, recordKey, claim } = await claimed();
    expect(await store.complete(recordKey, 'owner', '"first"', LONG)).toBe(true);
    expect(await store.complete(recordKey, 'owner', '"second"', LONG)).toBe(true);
    expect(await store.complete(recordKey, 'other', '"stranger"', LONG)).toBe(false);
    expect(await claim('other')).toEqual({ status: 'completed', fingerprint: 'fp', result: '"first"', remainingMs: expect.any(Number) });
    // A claim resent by the owner after its own completion gets the result, like anyone.
    expect(await claim('owner')).toMatchObject({ status: 'completed', result: '"first"' });
  });

  it('answers a renewal sent twice true both times, and one arriving after the owner completed true without a change', async () => {
    const { store, recordKey, claim } = await claimed();
    expect(await store.renew(recordKey, 'owner', LONG)).toBe(true);
    expect(await store.renew(recordKey, 'owner', LONG)).toBe(true);
    expect(await store.renew(recordKey, 'other', LONG)).toBe(false);
    expect(await store.complete(recordKey, 'owner', '"done"', 5 * LONG)).toBe(true);
    expect(await store.renew(recordKey, 'owner', 1)).toBe(true);
    expect(await store.renew(recordKey, 'other', 1)).toBe(false);
    const replay = await claim('other');
    // Still the retention, not the renewal's 1 ms lease.
    expect(replay.status === 'completed' && replay.remainingMs).toBeGreaterThan(LONG);
  });

  it('refuses a release of a completed record, even from its owner, and changes nothing', async () => {
    const { store, recordKey, claim } = await claimed();
    expect(await store.complete(recordKey, 'owner', '"done"', LONG)).toBe(true);
    expect(await store.release(recordKey, 'owner')).toBe(false);
    expect(await claim('other')).toMatchObject({ status: 'completed', result: '"done"' });
  });

  it('answers a release sent twice by its owner true both times, until another owner claims the key', async () => {
    const { store, recordKey, claim, epoch } = await claimed();
    expect(await store.release(recordKey, 'owner')).toBe(true);
    expect(await store.release(recordKey, 'owner')).toBe(true);
    expect(await store.release(recordKey, 'other')).toBe(false);
    const next = claimedEpoch(await claim('next'));
    expect(next).toBeGreaterThan(epoch);
    // Now the old owner's release is a stale one: refused, and the new claim stands.
    expect(await store.release(recordKey, 'owner')).toBe(false);
    expect(await claim('probe')).toMatchObject({ status: 'in_progress' });
  });
}
