import assert from 'node:assert/strict';
import { isIdempotencyError, StoreUnavailableError } from '../../errors';
import { assertMatch } from '../assert-match';
import { eventually, latch, within } from '../async';
import { charge, newKey, SAFETY_MS, withPolicy, type AddCase } from '../case-context';

/**
 * The store stops (its harness's `outage.stop()`): fail closed by default,
 * fail open only when the operation opts in, and never hang. Left out for a
 * store whose harness cannot stop it.
 */
export function outageCases(it: AddCase): void {
  it('answers ping() while the store is up, and rejects it, without hanging, once it is down', async (setup) => {
    const { store, outage } = await setup({ outage: true });
    if (!store.ping) return;
    await store.ping();
    await outage?.stop();
    // The driver's errors may come from another realm than the test's: read the message, not the class.
    const outcome = await within(store.ping(), SAFETY_MS, 'a ping to a stopped store').then(
      () => 'answered',
      (error: unknown) => `rejected: ${String((error as { message?: unknown })?.message)}`,
    );
    assert.match(outcome, /^rejected: /);
    assert.doesNotMatch(outcome, /still pending/);
  });

  it('fails closed when the store is down: StoreUnavailableError, and the action does not run', async (setup) => {
    const { coordinator, recorder, outage } = await setup({ outage: true });
    assertMatch(await coordinator.run(charge(newKey()), async () => ({ statusCode: 201 })), { replayed: false });
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
    assert.ok(isIdempotencyError(error, StoreUnavailableError), `expected StoreUnavailableError, got ${String(error)}`);
    assert.equal(executions, 0);
    assert.ok(recorder.count('store_error') >= 1, 'no store_error event');
    assert.equal(recorder.count('fail_open'), 0);
  });

  it('fails open when the operation opts in: the action runs exactly once, reported as fail_open', async (setup) => {
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
    assert.deepEqual(result, { value: { statusCode: 201, epoch: 0 }, replayed: false, waited: false });
    assert.equal(executions, 1);
    assert.equal(recorder.count('fail_open'), 1);
  });

  it('never fails open next to a live holder: a duplicate waiting when the store stops fails closed', async (setup) => {
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
    assert.ok(isIdempotencyError(error, StoreUnavailableError), `expected StoreUnavailableError, got ${String(error)}`);
    assert.equal(executions, 1);
    assert.equal(recorder.count('fail_open'), 0);
  });

  it('still answers the caller when the store stops while its action runs, once the lease it held has run out', async (setup) => {
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

    assertMatch(await within(run, SAFETY_MS, 'the run whose store stopped'), { replayed: false, value: { statusCode: 201 } });
    assert.ok(recorder.count('store_error') >= 1, 'no store_error event');
    assert.equal(recorder.count('executed'), 0);
    assert.equal(recorder.count('completion_failed'), 1);
  });
}
