import assert from 'node:assert/strict';
import { assertMatch } from '../assert-match';
import { eventually, latch, within } from '../async';
import { charge, neverRuns, newKey, SAFETY_MS, type AddCase, type Charge } from '../case-context';

/** What is stored and what releases the key for the next attempt. */
export function releaseCases(it: AddCase): void {
  it('releases the key when the action throws: the next run executes again', async (setup) => {
    const { coordinator, recorder } = await setup();
    const request = charge(newKey());
    await assert.rejects(
      coordinator.run(request, async () => Promise.reject(new Error('downstream reset'))),
      /downstream reset/,
    );
    const retry = await coordinator.run(request, async (): Promise<Charge> => ({ statusCode: 201, body: { chargeId: 'ch_2' } }));
    assertMatch(retry, { replayed: false, value: { body: { chargeId: 'ch_2' } } });
    assert.deepEqual(recorder.outcomes(), ['released', 'executed']);
  });

  it('releases the key on a transient 503 result: the caller gets the 503, the next run executes again', async (setup) => {
    const { coordinator } = await setup();
    const request = charge(newKey());
    let executions = 0;
    const action = async () => {
      executions += 1;
      return executions === 1 ? { statusCode: 503 } : { statusCode: 201 };
    };
    assertMatch(await coordinator.run(request, action), { replayed: false, value: { statusCode: 503 } });
    assertMatch(await coordinator.run(request, action), { replayed: false, value: { statusCode: 201 } });
    assert.equal(executions, 2);
  });

  it('lets a waiter parked during a failing execution execute itself once the key is released', async (setup) => {
    const { coordinator, recorder } = await setup();
    const request = charge(newKey());
    const gate = latch();
    let winnerEpoch = 0;
    const winner = coordinator.run(request, async ({ epoch }) => {
      winnerEpoch = epoch;
      await gate.promise;
      throw new Error('payment provider timed out');
    });
    await eventually(() => winnerEpoch > 0, 'the winner to start');
    const waiter = coordinator.run(request, async ({ epoch }): Promise<Charge> => {
      recorder.mark('waiter:executing');
      return { statusCode: 201, body: { chargeId: 'ch_waiter', epoch } };
    });
    await eventually(() => recorder.claims >= 2, 'the waiter to park');
    gate.open();

    await assert.rejects(winner, /payment provider timed out/);
    const result = await within(waiter, SAFETY_MS, 'the released waiter');
    assertMatch(result, { replayed: false, waited: true, value: { body: { chargeId: 'ch_waiter' } } });
    assert.ok((result.epoch ?? 0) > winnerEpoch, `epoch ${result.epoch} after ${winnerEpoch}`);
    assert.ok(recorder.log.indexOf('observer:released') < recorder.log.indexOf('waiter:executing'), 'released before the waiter ran');
  });

  it('stores a final 4xx (422) and replays it', async (setup) => {
    const { coordinator } = await setup();
    const request = charge(newKey());
    let executions = 0;
    const action = async () => {
      executions += 1;
      return { statusCode: 422, body: { error: 'card declined' } };
    };
    await coordinator.run(request, action);
    assert.deepEqual(await coordinator.run(request, neverRuns), {
      value: { statusCode: 422, body: { error: 'card declined' } },
      replayed: true,
      waited: false,
    });
    assert.equal(executions, 1);
  });

  it('stores a result with no value (undefined) and replays it as null', async (setup) => {
    const { coordinator } = await setup();
    const request = charge(newKey());
    assertMatch(await coordinator.run(request, async () => undefined), { replayed: false });
    assert.deepEqual(await coordinator.run(request, neverRuns), { value: null, replayed: true, waited: false });
  });

  for (const statusCode of [400, 409, 429]) {
    it(`releases a ${statusCode} result: the next run executes again`, async (setup) => {
      const { coordinator, recorder } = await setup();
      const request = charge(newKey());
      let executions = 0;
      const action = async () => {
        executions += 1;
        return { statusCode };
      };
      await coordinator.run(request, action);
      assertMatch(await coordinator.run(request, action), { replayed: false, value: { statusCode } });
      assert.equal(executions, 2);
      assert.deepEqual(recorder.outcomes(), ['released', 'released']);
    });
  }
}
