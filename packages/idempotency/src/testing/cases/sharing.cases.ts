import assert from 'node:assert/strict';
import { InFlightError, isIdempotencyError, KeyReusedError } from '../../errors';
import { assertMatch } from '../assert-match';
import { eventually, latch, track, within } from '../async';
import { charge, neverRuns, newKey, SAFETY_MS, withPolicy, type AddCase, type Charge } from '../case-context';

/** Duplicates of one request share one execution: they wait for it, replay it, or are refused. */
export function sharingCases(it: AddCase): void {
  it('executes once for 100 concurrent claims of one key; the other 99 replay the winner’s result', async (setup) => {
    const { coordinator, recorder } = await setup();
    const key = newKey();
    const gate = latch();
    let executions = 0;
    const action = async (): Promise<Charge> => {
      executions += 1;
      const chargeId = `ch_${executions}`;
      await gate.promise;
      return { statusCode: 201, body: { chargeId } };
    };
    const runs = Array.from({ length: 100 }, () => coordinator.run(charge(key), action));
    // Every claim answered, none in flight: only the holder runs. Counting
    // claims alone is not enough: a waiter woken early (a Cluster subscriber's
    // topology change) claims again, and its second claim would count for a
    // request whose first is still on its way.
    await eventually(() => recorder.claims >= 100 && coordinator.runningExecutions === 1, 'every request to have its claim answered');
    gate.open();
    const results = await within(Promise.all(runs), 20_000, '100 requests');

    assert.equal(executions, 1);
    assert.equal(results.filter((result) => !result.replayed).length, 1);
    const replays = results.filter((result) => result.replayed);
    assert.equal(replays.length, 99);
    assert.ok(replays.every((result) => result.waited));
    for (const result of results) assert.deepEqual(result.value, { statusCode: 201, body: { chargeId: 'ch_1' } });
  });

  it('wakes waiters with the winner’s result only after it completes, and promptly (by signal, not lease)', async (setup) => {
    const { coordinator, recorder } = await setup();
    // A long lease: a waiter woken by anything but the completion signal would blow SAFETY_MS.
    const request = charge(newKey(), withPolicy({ leaseMs: 60_000 }));
    const gate = latch();
    const winner = coordinator.run(request, async (): Promise<Charge> => {
      recorder.mark('winner:started');
      await gate.promise;
      recorder.mark('winner:returning');
      return { statusCode: 201, body: { chargeId: 'ch_winner' } };
    });
    await eventually(() => recorder.log.includes('winner:started'), 'the winner to start');
    const waiters = [1, 2, 3].map(() =>
      coordinator.run(request, neverRuns).then((result) => {
        recorder.mark('waiter:answered');
        return result;
      }),
    );
    await eventually(() => recorder.claims >= 4, 'the waiters to find the key in progress');
    gate.open();
    const answers = await within(Promise.all(waiters), SAFETY_MS, 'waiters after the completion');
    await winner;

    const completed = recorder.log.indexOf('observer:executed');
    assert.ok(completed > recorder.log.indexOf('winner:returning'), 'the winner completes after its action returned');
    assert.equal(recorder.positions('waiter:answered').length, 3);
    for (const position of recorder.positions('waiter:answered'))
      assert.ok(position > completed, 'a waiter answered before the completion');
    for (const answer of answers) assertMatch(answer, { replayed: true, waited: true, value: { body: { chargeId: 'ch_winner' } } });
  });

  it('refuses a different fingerprint with KeyReusedError while in progress and after completion', async (setup) => {
    const { coordinator, recorder } = await setup();
    const key = newKey();
    const gate = latch();
    let started = false;
    const winner = coordinator.run(charge(key), async (): Promise<Charge> => {
      started = true;
      await gate.promise;
      return { statusCode: 201, body: { chargeId: 'ch_1' } };
    });
    await eventually(() => started, 'the winner to start');
    const otherBody = { amountCents: 9_999 };

    const inProgress = await coordinator.run(charge(key, {}, otherBody), neverRuns).catch((error: unknown) => error);
    assert.ok(isIdempotencyError(inProgress, KeyReusedError), `expected KeyReusedError, got ${String(inProgress)}`);
    gate.open();
    await winner;
    const completed = await coordinator.run(charge(key, {}, otherBody), neverRuns).catch((error: unknown) => error);
    assert.ok(isIdempotencyError(completed, KeyReusedError), `expected KeyReusedError, got ${String(completed)}`);
    assertMatch(await coordinator.run(charge(key), neverRuns), { replayed: true });
    assert.equal(recorder.count('mismatched'), 2);
  });

  it('does not cancel the shared execution when a waiter’s signal aborts; a later run replays', async (setup) => {
    const { coordinator, recorder } = await setup();
    const request = charge(newKey());
    const gate = latch();
    let holderSignal: AbortSignal | undefined;
    const winner = coordinator.run(request, async ({ signal }): Promise<Charge> => {
      holderSignal = signal;
      await gate.promise;
      return { statusCode: 201, body: { chargeId: 'ch_shared' } };
    });
    await eventually(() => holderSignal !== undefined, 'the winner to start');
    const caller = new AbortController();
    const waiter = coordinator.run({ ...request, signal: caller.signal }, neverRuns);
    const winnerState = track(winner);
    await eventually(() => recorder.claims >= 2, 'the waiter to park');
    caller.abort();

    // Answered while the winner is still held at its gate: promptly, by the abort.
    await assert.rejects(within(waiter, SAFETY_MS, 'the aborted waiter'), { name: 'AbortError' });
    assert.ok(recorder.outcomes().includes('abandoned'));
    assert.equal(winnerState.settled, false);
    assert.equal(holderSignal?.aborted, false);
    gate.open();
    const result = await winner;
    assert.equal(result.replayed, false);
    assertMatch(await coordinator.run(request, neverRuns), { replayed: true, value: result.value });
  });

  it('answers InFlightError with retryAfterSeconds >= 1 under inFlight: reject, without waiting', async (setup) => {
    const { coordinator, recorder } = await setup();
    const key = newKey();
    const gate = latch();
    let started = false;
    const winner = coordinator.run(charge(key), async () => {
      started = true;
      await gate.promise;
      return { statusCode: 201 };
    });
    await eventually(() => started, 'the winner to start');

    const error = await coordinator.run(charge(key, withPolicy({ inFlight: 'reject' })), neverRuns).catch((e: unknown) => e);
    assert.ok(isIdempotencyError(error, InFlightError), `expected InFlightError, got ${String(error)}`);
    assert.ok(error.retryAfterSeconds >= 1, `retryAfterSeconds ${error.retryAfterSeconds}`);
    assert.equal(recorder.count('rejected_in_flight'), 1);
    gate.open();
    assertMatch(await winner, { replayed: false });
  });

  for (const [bound, limit] of [
    ['its caller’s deadline', { deadlineInMs: 300, policy: {} }],
    ['the operation’s maxWaitMs', { deadlineInMs: 60_000, policy: { maxWaitMs: 300 } }],
  ] as const) {
    it(`gives a waiter InFlightError once ${bound} passes, while the execution continues`, async (setup) => {
      const { coordinator, recorder } = await setup();
      const key = newKey();
      const gate = latch();
      let executions = 0;
      const winner = coordinator.run(charge(key), async (): Promise<Charge> => {
        executions += 1;
        await gate.promise;
        return { statusCode: 201, body: { chargeId: 'ch_1' } };
      });
      await eventually(() => executions === 1, 'the winner to start');
      const winnerState = track(winner);
      const waiter = coordinator.run(charge(key, { deadline: Date.now() + limit.deadlineInMs, policy: limit.policy }), neverRuns);

      const error = await within(waiter, SAFETY_MS, 'the bounded waiter').catch((e: unknown) => e);
      assert.ok(isIdempotencyError(error, InFlightError), `expected InFlightError, got ${String(error)}`);
      assert.equal(winnerState.settled, false);
      assert.equal(recorder.count('rejected_in_flight'), 1);
      gate.open();
      assertMatch(await winner, { replayed: false });
      assertMatch(await coordinator.run(charge(key), neverRuns), { replayed: true });
      assert.equal(executions, 1);
    });
  }
}
