import assert from 'node:assert/strict';
import { InFlightError, isIdempotencyError } from '../../errors';
import { assertMatch } from '../assert-match';
import { eventually, latch, within } from '../async';
import { charge, neverRuns, newKey, SAFETY_MS, withPolicy, type AddCase, type Charge } from '../case-context';

/**
 * Duplicates of one key may share one wait in the store (one subscription,
 * one read): each still leaves on its own, and the others go on waiting.
 */
export function waitingCases(it: AddCase): void {
  it('lets waiters of one key leave one by one (their callers gone, their waits over); the rest get the replay by signal', async (setup) => {
    const { coordinator, recorder } = await setup();
    // A long lease: a waiter woken by anything but the completion signal would blow SAFETY_MS.
    const key = newKey();
    const gate = latch();
    const winner = coordinator.run(charge(key, withPolicy({ leaseMs: 60_000 })), async (): Promise<Charge> => {
      await gate.promise;
      return { statusCode: 201, body: { chargeId: 'ch_winner' } };
    });
    await eventually(() => recorder.claims >= 1, 'the winner to claim');
    const callers = Array.from({ length: 20 }, () => new AbortController());
    const waiters = callers.map((caller) => coordinator.run(charge(key, { signal: caller.signal }), neverRuns));
    await eventually(() => recorder.claims >= 21, 'the waiters to find the key held');
    const hurried = coordinator.run(charge(key, withPolicy({ maxWaitMs: 300 })), neverRuns);
    await eventually(() => recorder.claims >= 22, 'the hurried waiter to find the key held');

    const leaving = waiters.filter((_, i) => i % 2 === 0);
    for (const [i, caller] of callers.entries()) if (i % 2 === 0) caller.abort();
    for (const waiter of leaving) await assert.rejects(within(waiter, SAFETY_MS, 'a waiter whose caller left'), { name: 'AbortError' });
    const hurriedError = await within(hurried, SAFETY_MS, 'the waiter whose wait ran out').catch((error: unknown) => error);
    assert.ok(isIdempotencyError(hurriedError, InFlightError), `expected InFlightError, got ${String(hurriedError)}`);
    // Joins the wait the others still share (claims so far: the winner's, 20, and the hurried waiter's two).
    const late = coordinator.run(charge(key), neverRuns);
    await eventually(() => recorder.claims >= 24, 'the late waiter to find the key held');

    gate.open();
    const staying = [...waiters.filter((_, i) => i % 2 === 1), late];
    const answers = await within(Promise.all(staying), SAFETY_MS, 'the waiters that stayed');
    for (const answer of answers) assertMatch(answer, { replayed: true, waited: true, value: { body: { chargeId: 'ch_winner' } } });
    await winner;
  });
}
