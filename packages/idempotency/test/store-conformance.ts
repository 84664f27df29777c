import { randomUUID } from 'node:crypto';
import { IdempotencyCoordinator, type ExecutionContext, type RunRequest } from '../src/coordinator';
import { isInFlightError, isKeyReusedError, isStoreUnavailableError } from '../src/errors';
import { requestFingerprint } from '../src/fingerprint';
import type { OperationPolicy } from '../src/policy';
import type { ClaimResult, IdempotencyStore } from '../src/store';
import { eventually, latch, sleep, track, within } from './support/async';
import { Recorder } from './support/recorder';

/** A store under test, built fresh for every case. */
export interface StoreHarness {
  store: IdempotencyStore;
  /** Close the store and remove what the case left behind. */
  teardown(): Promise<void>;
  /** Make the store unreachable (only when the harness was asked for an outage). */
  outage?: { stop(): Promise<void> };
}

/** What a case needs from its harness. */
export interface HarnessRequest {
  /** The case stops the store: give it a store of its own, with `outage`. */
  outage?: boolean;
}

export interface ConformanceOptions {
  /** The harness can provide `outage`; without it the outage cases are skipped. */
  outage?: boolean;
}

/**
 * Bounds every wait that a working store ends by a signal. Generous: it
 * catches a hang or a missing wake-up, it does not measure speed. Harnesses
 * must not poll more often than this as a safety net, or a missing
 * completion signal would go unnoticed.
 */
const SAFETY_MS = 5_000;
const OPERATION = 'conformance.charge';

type Charge = { statusCode: number; body: { chargeId: string; epoch?: number } };

/**
 * The behaviour every `IdempotencyStore` must show together with the
 * coordinator: one execution per key, waiters answered by the winner,
 * release on failure, fencing, leases, retention and outages. Run it once
 * per store; no mocks, real timers, short leases with wide margins.
 */
export function describeStoreConformance(
  name: string,
  harness: (request: HarnessRequest) => Promise<StoreHarness>,
  options: ConformanceOptions = {},
): void {
  describe(`${name} (store conformance)`, () => {
    let current: StoreHarness | undefined;

    afterEach(async () => {
      const done = current;
      current = undefined;
      await done?.teardown();
    });

    async function setup(request: HarnessRequest = {}) {
      current = await harness(request);
      const recorder = new Recorder();
      const coordinator = new IdempotencyCoordinator({ service: 'conformance', store: current.store, observer: recorder });
      return { store: current.store, coordinator, recorder, outage: current.outage };
    }

    /** A request for a fresh key; `body` changes the fingerprint. */
    function charge(key: string, extra: Partial<RunRequest> = {}, body: unknown = { amountCents: 500 }): RunRequest {
      const fingerprint = requestFingerprint({ method: 'POST', route: '/charges', body });
      return { operation: OPERATION, key, fingerprint, ...extra };
    }
    const newKey = () => `key-${randomUUID()}`;
    const withPolicy = (policy: Partial<OperationPolicy>) => ({ policy });
    const neverRuns = async (): Promise<Charge> => {
      throw new Error('this action must not run');
    };

    it('executes once for 100 concurrent claims of one key; the other 99 replay the winner’s result', async () => {
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
      await eventually(() => recorder.claims >= 100, 'every request to claim once');
      gate.open();
      const results = await within(Promise.all(runs), 20_000, '100 requests');

      expect(executions).toBe(1);
      expect(results.filter((result) => !result.replayed)).toHaveLength(1);
      const replays = results.filter((result) => result.replayed);
      expect(replays).toHaveLength(99);
      expect(replays.every((result) => result.waited)).toBe(true);
      for (const result of results) expect(result.value).toEqual({ statusCode: 201, body: { chargeId: 'ch_1' } });
    });

    it('wakes waiters with the winner’s result only after it completes, and promptly (by signal, not lease)', async () => {
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
      expect(completed).toBeGreaterThan(recorder.log.indexOf('winner:returning'));
      expect(recorder.positions('waiter:answered')).toHaveLength(3);
      for (const position of recorder.positions('waiter:answered')) expect(position).toBeGreaterThan(completed);
      for (const answer of answers) {
        expect(answer).toMatchObject({ replayed: true, waited: true, value: { body: { chargeId: 'ch_winner' } } });
      }
    });

    it('releases the key when the action throws: the next run executes again', async () => {
      const { coordinator, recorder } = await setup();
      const request = charge(newKey());
      await expect(coordinator.run(request, async () => Promise.reject(new Error('downstream reset')))).rejects.toThrow(
        'downstream reset',
      );
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

    it('refuses complete, release and renew from a stale owner once another owner re-claimed the key', async () => {
      const { store, coordinator } = await setup();
      const storeKey = coordinator.storeKey(OPERATION, '', newKey());
      const claim = (owner: string, leaseMs: number) => store.claim({ storeKey, fingerprint: 'fp', owner, leaseMs });
      const oldEpoch = claimedEpoch(await claim('owner-old', 200));
      let taken: ClaimResult | undefined;
      await eventually(async () => (taken = await claim('owner-new', 60_000)).status === 'claimed', 'the old lease to lapse');
      const newEpoch = claimedEpoch(taken);
      expect(newEpoch).toBeGreaterThan(oldEpoch);

      expect(await store.complete(storeKey, 'owner-old', '"stale"', 60_000)).toBe(false);
      expect(await store.release(storeKey, 'owner-old')).toBe(false);
      expect(await store.renew(storeKey, 'owner-old', 1)).toBe(false);

      const probe = await claim('owner-probe', 60_000);
      expect(probe).toMatchObject({ status: 'in_progress', fingerprint: 'fp' });
      expect(probe.status === 'in_progress' && probe.leaseRemainingMs).toBeGreaterThan(30_000);
      expect(await store.renew(storeKey, 'owner-new', 60_000)).toBe(true);
      expect(await store.complete(storeKey, 'owner-new', '"fresh"', 60_000)).toBe(true);
      expect(await claim('owner-probe', 60_000)).toEqual({ status: 'completed', fingerprint: 'fp', result: '"fresh"' });
    });

    it('refuses complete, release and renew on a completed record, even from its owner', async () => {
      const { store, coordinator } = await setup();
      const storeKey = coordinator.storeKey(OPERATION, '', newKey());
      claimedEpoch(await store.claim({ storeKey, fingerprint: 'fp', owner: 'owner', leaseMs: 60_000 }));
      expect(await store.complete(storeKey, 'owner', '"first"', 60_000)).toBe(true);

      expect(await store.complete(storeKey, 'owner', '"second"', 60_000)).toBe(false);
      expect(await store.renew(storeKey, 'owner', 60_000)).toBe(false);
      expect(await store.release(storeKey, 'owner')).toBe(false);
      const replay = await store.claim({ storeKey, fingerprint: 'fp', owner: 'other', leaseMs: 60_000 });
      expect(replay).toEqual({ status: 'completed', fingerprint: 'fp', result: '"first"' });
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
      const storeKey = coordinator.storeKey(OPERATION, '', request.key);
      const claimedAt = Date.now();
      const crashedEpoch = claimedEpoch(
        await store.claim({ storeKey, fingerprint: request.fingerprint, owner: 'crashed-holder', leaseMs: 200 }),
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
      expect(await store.complete(storeKey, 'crashed-holder', '"late"', 60_000)).toBe(false);
      expect(await coordinator.run(request, neverRuns)).toMatchObject({ replayed: true, value: result.value });
    });

    it('replays within retention and re-executes once the retention has expired', async () => {
      const { coordinator } = await setup();
      const request = charge(newKey(), withPolicy({ retentionMs: 500 }));
      const epochs: number[] = [];
      const action = async ({ epoch }: ExecutionContext): Promise<Charge> => {
        epochs.push(epoch);
        return { statusCode: 201, body: { chargeId: `ch_${epochs.length}` } };
      };
      expect(await coordinator.run(request, action)).toMatchObject({ replayed: false });
      expect(await coordinator.run(request, action)).toMatchObject({ replayed: true, value: { body: { chargeId: 'ch_1' } } });
      await eventually(async () => !(await coordinator.run(request, action)).replayed, 'the retention to expire');
      expect(epochs).toHaveLength(2);
      expect(epochs[1]).toBeGreaterThan(epochs[0] as number);
    });

    it('refuses a different fingerprint with KeyReusedError while in progress and after completion', async () => {
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
      expect(isKeyReusedError(inProgress)).toBe(true);
      gate.open();
      await winner;
      const completed = await coordinator.run(charge(key, {}, otherBody), neverRuns).catch((error: unknown) => error);
      expect(isKeyReusedError(completed)).toBe(true);
      expect(await coordinator.run(charge(key), neverRuns)).toMatchObject({ replayed: true });
      expect(recorder.count('mismatched')).toBe(2);
    });

    it('does not cancel the shared execution when a waiter’s signal aborts; a later run replays', async () => {
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
      await expect(within(waiter, SAFETY_MS, 'the aborted waiter')).rejects.toMatchObject({ name: 'AbortError' });
      expect(winnerState.settled).toBe(false);
      expect(holderSignal?.aborted).toBe(false);
      gate.open();
      const result = await winner;
      expect(result.replayed).toBe(false);
      expect(await coordinator.run(request, neverRuns)).toMatchObject({ replayed: true, value: result.value });
    });

    it('hands out positive epochs that strictly increase across expiry, release and retention', async () => {
      const { store, coordinator } = await setup();
      const request = charge(newKey(), withPolicy({ retentionMs: 300 }));
      const storeKey = coordinator.storeKey(OPERATION, '', request.key);
      const epochs = [
        claimedEpoch(await store.claim({ storeKey, fingerprint: request.fingerprint, owner: 'crashed', leaseMs: 200 })),
      ];
      // expiry -> reclaim (the coordinator waits out the lease), then release
      await expect(
        coordinator.run(request, async ({ epoch }) => {
          epochs.push(epoch);
          throw new Error('transient');
        }),
      ).rejects.toThrow('transient');
      // release -> reclaim, completed with a short retention
      const complete = async ({ epoch }: ExecutionContext) => {
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

    it('answers InFlightError with retryAfterSeconds >= 1 under inFlight: reject, without waiting', async () => {
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
      expect(isInFlightError(error)).toBe(true);
      expect(isInFlightError(error) && error.retryAfterSeconds).toBeGreaterThanOrEqual(1);
      expect(recorder.count('rejected_in_flight')).toBe(1);
      gate.open();
      expect(await winner).toMatchObject({ replayed: false });
    });

    it.each([
      ['its caller’s deadline', { deadlineInMs: 300, policy: {} }],
      ['the operation’s maxWaitMs', { deadlineInMs: 60_000, policy: { maxWaitMs: 300 } }],
    ])('gives a waiter InFlightError once %s passes, while the execution continues', async (_, bound) => {
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
      const waiter = coordinator.run(charge(key, { deadline: Date.now() + bound.deadlineInMs, policy: bound.policy }), neverRuns);

      const error = await within(waiter, SAFETY_MS, 'the bounded waiter').catch((e: unknown) => e);
      expect(isInFlightError(error)).toBe(true);
      expect(winnerState.settled).toBe(false);
      expect(recorder.count('rejected_in_flight')).toBe(1);
      gate.open();
      expect(await winner).toMatchObject({ replayed: false });
      expect(await coordinator.run(charge(key), neverRuns)).toMatchObject({ replayed: true });
      expect(executions).toBe(1);
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
      expect(await coordinator.run(request, action)).toEqual({
        value: { statusCode: 422, body: { error: 'card declined' } },
        replayed: true,
        waited: false,
      });
      expect(executions).toBe(1);
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

    const outageIt = options.outage ? it : it.skip;

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

    outageIt('still answers the caller when the store stops while its action runs', async () => {
      const { coordinator, recorder, outage } = await setup({ outage: true });
      const gate = latch();
      let started = false;
      const run = coordinator.run(charge(newKey()), async () => {
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
    });
  });
}

function claimedEpoch(result: ClaimResult | undefined): number {
  if (result?.status !== 'claimed') throw new Error(`expected a claim, got ${JSON.stringify(result)}`);
  return result.epoch;
}
