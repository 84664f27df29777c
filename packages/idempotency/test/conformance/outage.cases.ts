import { isStoreUnavailableError } from '../../src/errors';
import { eventually, latch, within } from '../support/async';
import { charge, newKey, SAFETY_MS, withPolicy, type ConformanceContext } from './context';

/**
 * The store stops (its harness's `outage.stop()`): fail closed by default,
 * fail open only when the operation opts in, and never hang. Skipped for a
 * store whose harness cannot stop it.
 */
export function describeOutageCases({ setup }: ConformanceContext): void {
  const outageIt = it;

  outageIt('answers ping() while the store is up, and rejects it, without hanging, once it is down', async () => {
    const { store, outage } = await setup({ outage: true });
    if (!store.ping) return;
    await store.ping();
    await outage?.stop();
    // The driver's errors may come from another realm than the test's: read the message, not the class.
    const outcome = await within(store.ping(), SAFETY_MS, 'a ping to a stopped store').then(
      () => 'answered',
      (error: unknown) => `rejected: ${String((error as { message?: unknown })?.message)}`,
    );
    expect(outcome).toMatch(/^rejected: /);
    expect(outcome).not.toContain('still pending');
  });

  outageIt('fails closed when the store is down: StoreUnavailableError, and the action does not run', async () => {
    const { coordinator, recorder, outage } = await setup({ outage: true });
    expect(await coordinator.run(charge(newKey()), async () => ({ statusCode: 201 }))).toMatchObject({ replayed: false });
    await outage?.stop();

    let executions = 0;
    const error = await within(
      coordinator.run(charge(newKey()), async () => {
        executions += 1;
        return { statusCode: 201 };
      }),
      SAFETY_MS,
      'a run against a stopped store',
    ).catch((e: unknown) => e);
    expect(isStoreUnavailableError(error)).toBe(true);
    expect(executions).toBe(0);
    expect(recorder.count('store_error')).toBeGreaterThanOrEqual(1);
    expect(recorder.count('fail_open')).toBe(0);
  });

  outageIt('fails open when the operation opts in: the action runs exactly once, reported as fail_open', async () => {
    const { coordinator, recorder, outage } = await setup({ outage: true });
    await outage?.stop();

    let executions = 0;
    const result = await within(
      coordinator.run(charge(newKey(), withPolicy({ onStoreFailure: 'fail-open' })), async ({ epoch }) => {
        executions += 1;
        return { statusCode: 201, epoch };
      }),
      SAFETY_MS,
      'a fail-open run against a stopped store',
    );
    expect(result).toEqual({ value: { statusCode: 201, epoch: 0 }, replayed: false, waited: false });
    expect(executions).toBe(1);
    expect(recorder.count('fail_open')).toBe(1);
  });

  outageIt('never fails open next to a live holder: a duplicate waiting when the store stops fails closed', async () => {
    const { coordinator, recorder, outage } = await setup({ outage: true });
    const key = newKey();
    const openPolicy = withPolicy({ onStoreFailure: 'fail-open', leaseMs: 30_000 });
    const gate = latch();
    let executions = 0;
    // The holder's completion is retried until its lease ends: a short one lets the case end within its bound.
    const holder = coordinator.run(charge(key, withPolicy({ onStoreFailure: 'fail-open', leaseMs: 3_000 })), async () => {
      executions += 1;
      await gate.promise;
      return { statusCode: 201 };
    });
    await eventually(() => executions === 1, 'the holder to start');
    const duplicate = coordinator
      .run(charge(key, openPolicy), async () => {
        executions += 1;
        return { statusCode: 201 };
      })
      .catch((e: unknown) => e);
    // Its claim answered in_progress: it is waiting for the holder.
    await eventually(() => recorder.claims >= 2, 'the duplicate to wait');
    await outage?.stop();

    const error = await within(duplicate, SAFETY_MS * 2, 'the duplicate whose store stopped');
    gate.open();
    await within(holder, SAFETY_MS, 'the holder').catch(() => undefined);
    expect(isStoreUnavailableError(error)).toBe(true);
    expect(executions).toBe(1);
    expect(recorder.count('fail_open')).toBe(0);
  });

  outageIt('still answers the caller when the store stops while its action runs, once the lease it held has run out', async () => {
    const { coordinator, recorder, outage } = await setup({ outage: true });
    const gate = latch();
    let started = false;
    // The completion is retried for as long as the lease can be held: a short one keeps the case short.
    const run = coordinator.run(charge(newKey(), withPolicy({ leaseMs: 1_000 })), async () => {
      started = true;
      await gate.promise;
      return { statusCode: 201 };
    });
    await eventually(() => started, 'the action to start');
    await outage?.stop();
    gate.open();

    expect(await within(run, SAFETY_MS, 'the run whose store stopped')).toMatchObject({ replayed: false, value: { statusCode: 201 } });
    expect(recorder.count('store_error')).toBeGreaterThanOrEqual(1);
    expect(recorder.count('executed')).toBe(0);
    expect(recorder.count('completion_failed')).toBe(1);
  });
}
