import { eventually, latch, within } from '../support/async';
import { charge, neverRuns, newKey, SAFETY_MS, type Charge, type ConformanceContext } from './context';

/** What is stored and what releases the key for the next attempt. */
export function describeReleaseCases({ setup }: ConformanceContext): void {
  it('releases the key when the action throws: the next run executes again', async () => {
    const { coordinator, recorder } = await setup();
    const request = charge(newKey());
    await expect(coordinator.run(request, async () => Promise.reject(new Error('downstream reset')))).rejects.toThrow('downstream reset');
    const retry = await coordinator.run(request, async (): Promise<Charge> => ({ statusCode: 201, body: { chargeId: 'ch_2' } }));
    expect(retry).toMatchObject({ replayed: false, value: { body: { chargeId: 'ch_2' } } });
    expect(recorder.outcomes()).toEqual(['released', 'executed']);
  });

  it('releases the key on a transient 503 result: the caller gets the 503, the next run executes again', async () => {
    const { coordinator } = await setup();
    const request = charge(newKey());
    let executions = 0;
    const action = async () => {
      executions += 1;
      return executions === 1 ? { statusCode: 503 } : { statusCode: 201 };
    };
    expect(await coordinator.run(request, action)).toMatchObject({ replayed: false, value: { statusCode: 503 } });
    expect(await coordinator.run(request, action)).toMatchObject({ replayed: false, value: { statusCode: 201 } });
    expect(executions).toBe(2);
  });

  it('lets a waiter parked during a failing execution execute itself once the key is released', async () => {
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

    await expect(winner).rejects.toThrow('payment provider timed out');
    const result = await within(waiter, SAFETY_MS, 'the released waiter');
    expect(result).toMatchObject({ replayed: false, waited: true, value: { body: { chargeId: 'ch_waiter' } } });
    expect(result.epoch).toBeGreaterThan(winnerEpoch);
    expect(recorder.log.indexOf('observer:released')).toBeLessThan(recorder.log.indexOf('waiter:executing'));
  });

  it('stores a final 4xx (422) and replays it', async () => {
    const { coordinator } = await setup();
    const request = charge(newKey());
    let executions = 0;
    const action = async () => {
      executions += 1;
      return { statusCode: 422, body: { error: 'card declined' } };
    };
    await coordinator.run(request, action);
    expect(await coordinator.run(request, neverRuns)).toEqual({
      value: { statusCode: 422, body: { error: 'card declined' } },
      replayed: true,
      waited: false,
    });
    expect(executions).toBe(1);
  });

  it('stores a result with no value (undefined) and replays it as null', async () => {
    const { coordinator } = await setup();
    const request = charge(newKey());
    expect(await coordinator.run(request, async () => undefined)).toMatchObject({ replayed: false });
    expect(await coordinator.run(request, neverRuns)).toEqual({ value: null, replayed: true, waited: false });
  });

  it.each([400, 409, 429])('releases a %i result: the next run executes again', async (statusCode) => {
    const { coordinator, recorder } = await setup();
    const request = charge(newKey());
    let executions = 0;
    const action = async () => {
      executions += 1;
      return { statusCode };
    };
    await coordinator.run(request, action);
    expect(await coordinator.run(request, action)).toMatchObject({ replayed: false, value: { statusCode } });
    expect(executions).toBe(2);
    expect(recorder.outcomes()).toEqual(['released', 'released']);
  });
}
