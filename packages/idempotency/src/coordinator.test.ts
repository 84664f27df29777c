import { eventually, latch, within } from '../test/support/async';
import { retainedBytes } from '../test/support/heap';
import { Recorder } from '../test/support/recorder';
import { IdempotencyCoordinator, type RunRequest } from './coordinator';
import type { Execution } from './execution';
import {
  InFlightError,
  isIdempotencyError,
  KeyReusedError,
  LeaseLostError,
  ResultNotStoredError,
  StoreRefusedError,
  StoreUnavailableError,
} from './errors';
import { InvalidPolicyError } from './errors';
import { hashKey } from './key-hash';
import { MemoryStore } from './memory-store';
import type { IdempotencyStore } from './store';

const OPERATION = 'payments.charge';
const KEY = 'order-42-attempt-key';

let store: MemoryStore;
let recorder: Recorder;
let coordinator: IdempotencyCoordinator;

beforeEach(() => {
  store = new MemoryStore();
  recorder = new Recorder();
  coordinator = new IdempotencyCoordinator({ service: 'payments', store, observer: recorder });
});
afterEach(() => store.close());

const request = (extra: Partial<RunRequest> = {}): RunRequest => ({ operation: OPERATION, key: KEY, fingerprint: 'fp-1', ...extra });
const ok = async () => ({ statusCode: 201, body: { chargeId: 'ch_1' } });
const neverRuns = async () => {
  throw new Error('this action must not run');
};

/** A store that cannot be reached. */
class UnreachableStore implements IdempotencyStore {
  private readonly down = () => Promise.reject(new Error('ECONNREFUSED'));
  claim = this.down;
  complete = this.down;
  release = this.down;
  renew = this.down;
  waitForChange = this.down;
  close = async () => undefined;
}

describe('fail-open', () => {
  it('runs the action unprotected only when the claim itself failed', async () => {
    const unreachable = new IdempotencyCoordinator({ service: 'payments', store: new UnreachableStore(), observer: recorder });
    const result = await unreachable.run(request({ policy: { onStoreFailure: 'fail-open' } }), async (execution) => ({
      epoch: execution.epoch,
    }));
    expect(result).toEqual({ value: { epoch: 0 }, replayed: false, waited: false });
    expect(recorder.outcomes()).toEqual(['store_error', 'fail_open']);
  });

  it('never runs when the store answers but refuses (credentials, grants): every retry is refused, none runs', async () => {
    const refusing = new UnreachableStore();
    refusing.claim = () => Promise.reject(new StoreRefusedError('the role may not use the table'));
    const refused = new IdempotencyCoordinator({ service: 'payments', store: refusing, observer: recorder });
    let runs = 0;
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const error = await refused
        .run(request({ policy: { onStoreFailure: 'fail-open' } }), async () => ((runs += 1), ok()))
        .catch((e: unknown) => e);
      expect(isIdempotencyError(error, StoreRefusedError)).toBe(true);
    }
    expect(runs).toBe(0);
    expect(recorder.outcomes()).toEqual(['store_error', 'store_error', 'store_error']);
  });

  it('never runs next to a live holder: a wait that fails after the key was seen in progress fails closed', async () => {
    const gate = latch();
    const holder = coordinator.run(request(), async () => (await gate.promise, ok()));
    vi.spyOn(store, 'waitForChange').mockRejectedValue(new Error('ECONNRESET'));
    let ran = false;
    const error = await coordinator
      .run(request({ policy: { onStoreFailure: 'fail-open' } }), async () => ((ran = true), ok()))
      .catch((e: unknown) => e);
    gate.open();
    await holder;

    expect(isIdempotencyError(error, StoreUnavailableError)).toBe(true);
    expect(ran).toBe(false);
    expect(recorder.count('fail_open')).toBe(0);
  });

  it('never runs next to a holder it waited for: a claim that fails after a wait fails closed', async () => {
    const gate = latch();
    const holder = coordinator.run(request(), async () => (await gate.promise, ok()));
    const claim = store.claim.bind(store);
    let claims = 0;
    vi.spyOn(store, 'claim').mockImplementation(async (claimRequest) => {
      claims += 1;
      if (claims === 2) throw new Error('ECONNRESET'); // the duplicate's claim after its wait
      return claim(claimRequest);
    });
    let ran = false;
    const duplicate = coordinator
      .run(request({ policy: { onStoreFailure: 'fail-open', maxWaitMs: 10_000 } }), async () => ((ran = true), ok()))
      .catch((e: unknown) => e);
    await eventually(() => claims === 1, 'the duplicate to wait');
    gate.open();
    await holder;

    expect(isIdempotencyError(await duplicate, StoreUnavailableError)).toBe(true);
    expect(ran).toBe(false);
  });
});

describe('policies', () => {
  it.each([
    [{ leaseMs: 0 }, /leaseMs must be a number of milliseconds from 1/],
    [{ leaseMs: -5 }, /leaseMs/],
    [{ leaseMs: Number.NaN }, /leaseMs/],
    [{ leaseMs: 1_000, heartbeatMs: 1_000 }, /heartbeatMs \(1000\) must be shorter than leaseMs \(1000\)/],
    [{ leaseMs: 300, heartbeatMs: 500 }, /heartbeatMs \(500\) must be shorter than leaseMs \(300\)/],
    [{ retentionMs: 0 }, /retentionMs/],
    [{ maxWaitMs: -1 }, /maxWaitMs/],
    [{ inFlight: 'queue' as never }, /inFlight must be 'wait' or 'reject'/],
    [{ onStoreFailure: 'ignore' as never }, /onStoreFailure must be 'fail-closed' or 'fail-open'/],
    [{ maxWaitersPerKey: 0 }, /maxWaitersPerKey must be a whole number from 1/],
    [{ maxWaitersPerKey: 2.5 }, /maxWaitersPerKey/],
  ])('refuses %j at construction, naming the option', (policy, message) => {
    expect(() => new IdempotencyCoordinator({ service: 'payments', store, defaults: policy })).toThrow(InvalidPolicyError);
    expect(() => new IdempotencyCoordinator({ service: 'payments', store, defaults: policy })).toThrow(message);
    expect(() => new IdempotencyCoordinator({ service: 'payments', store, operations: { [OPERATION]: policy } })).toThrow(
      new RegExp(`operation ${OPERATION}: `),
    );
  });

  it('refuses a route policy that would run one key twice before anything is claimed', async () => {
    const claim = vi.spyOn(store, 'claim');
    await expect(coordinator.run(request({ policy: { leaseMs: 100, heartbeatMs: 100 } }), ok)).rejects.toThrow(InvalidPolicyError);
    expect(claim).not.toHaveBeenCalled();
  });

  it.each([0, -1, 2.5, Number.NaN, Infinity])('refuses maxWaiters %s at construction, naming the option', (maxWaiters) => {
    expect(() => new IdempotencyCoordinator({ service: 'payments', store, maxWaiters })).toThrow(InvalidPolicyError);
    expect(() => new IdempotencyCoordinator({ service: 'payments', store, maxWaiters })).toThrow(
      /payments: maxWaiters must be a whole number from 1/,
    );
  });

  it('accepts a heartbeat of 0 (off) with any lease', () => {
    expect(() => new IdempotencyCoordinator({ service: 'payments', store, defaults: { leaseMs: 100, heartbeatMs: 0 } })).not.toThrow();
  });
});

describe('the end of an execution', () => {
  it('does not report a lost lease for a renewal that lands after the completion', async () => {
    // The renewal travels on another connection than the completion and arrives after it.
    const landed = latch();
    const renewStarted = latch();
    const renew = store.renew.bind(store);
    const renewals: Array<Promise<boolean>> = [];
    vi.spyOn(store, 'renew').mockImplementation((...args) => {
      const renewal = (async () => {
        renewStarted.open();
        await landed.promise;
        return renew(...args);
      })();
      renewals.push(renewal);
      return renewal;
    });
    const done = coordinator.run(request({ policy: { leaseMs: 300, heartbeatMs: 20 } }), async (execution) => {
      await renewStarted.promise;
      return { statusCode: 201, aborted: () => execution.signal.aborted, signal: execution.signal };
    });
    const { value } = await done;
    landed.open();
    await Promise.all(renewals); // the late renewal has landed (refused: the record is completed) ...
    await new Promise((resolve) => setImmediate(resolve)); // ... and the heartbeat has handled its answer

    expect(value.signal.aborted).toBe(false);
    expect(recorder.outcomes()).toEqual(['executed']);
  });

  it('stores a result JSON cannot hold as an error: the retry throws ResultNotStoredError and never runs the action again', async () => {
    let runs = 0;
    const first = await coordinator.run(request(), async () => ((runs += 1), { statusCode: 201, amount: 10n }));
    const retry = await coordinator.run(request(), async () => ((runs += 1), ok())).catch((e: unknown) => e);

    expect(first.value.amount).toBe(10n);
    expect(isIdempotencyError(retry, ResultNotStoredError)).toBe(true);
    expect(runs).toBe(1);
    expect(recorder.outcomes()).toEqual(['unstorable', 'executed', 'replayed']);
  });

  it('stores the result as it came when isFinal throws, and reports the rule’s error: the key is not held for good', async () => {
    const broken = new Error('isFinal bug');
    const policy = {
      isFinal: () => {
        throw broken;
      },
      maxWaitMs: 0, // a key still held answers 409 at once
    };
    let runs = 0;
    const first = await coordinator.run(request({ policy }), async () => ((runs += 1), ok()));
    const retry = await coordinator.run(request({ policy }), async () => ((runs += 1), ok()));

    expect(first).toMatchObject({ replayed: false, value: { statusCode: 201 } });
    expect(retry).toMatchObject({ replayed: true, value: first.value });
    expect(runs).toBe(1);
    expect(recorder.outcomes()).toEqual(['is_final_threw', 'executed', 'replayed']);
    expect(recorder.events[0]).toMatchObject({ error: broken, epoch: first.epoch });
  });

  it('releases a transient result when isFinal throws, as the built-in rule would: the retry runs', async () => {
    const policy = {
      isFinal: () => {
        throw new Error('isFinal bug');
      },
      maxWaitMs: 0,
    };
    let runs = 0;
    const first = await coordinator.run(request({ policy }), async () => ((runs += 1), { statusCode: 503 }));
    const retry = await coordinator.run(request({ policy }), async () => ((runs += 1), ok()));

    expect(first).toMatchObject({ replayed: false, value: { statusCode: 503 } });
    expect(retry).toMatchObject({ replayed: false, value: { statusCode: 201 } });
    expect(runs).toBe(2);
    expect(recorder.outcomes()).toEqual(['is_final_threw', 'released', 'is_final_threw', 'executed']);
  });
});

describe('the replay cache', () => {
  it('answers the replays after a record’s first one from memory, without a claim', async () => {
    const claim = vi.spyOn(store, 'claim');
    const first = await coordinator.run(request(), ok);
    const replays = [];
    for (let i = 0; i < 3; i += 1) replays.push(await coordinator.run(request(), neverRuns));

    expect(claim).toHaveBeenCalledTimes(2); // the execution, then its first replay
    for (const replay of replays) expect(replay).toEqual({ value: first.value, replayed: true, waited: false });
    expect(recorder.outcomes()).toEqual(['executed', 'replayed', 'replayed', 'replayed']);
  });

  it('keeps a record’s key, not its scope and key: 1,000 records replayed under 100 kB scopes keep a few bytes each', async () => {
    const longScope = 'x'.repeat(100_000);
    const retained = await retainedBytes(async () => {
      for (let i = 0; i < 1_000; i++) {
        const scoped = request({ scope: `${i}-${longScope}`, key: `key-${i}` });
        await coordinator.run(scoped, ok);
        await coordinator.run(scoped, neverRuns); // replayed once: now in memory
      }
    });

    expect(coordinator.replayFromMemory(request({ scope: `999-${longScope}`, key: 'key-999' }))).toBeDefined();
    // Scopes kept would be 100 MB; what the records and the cache keep of 1,000 small answers is far below 8 MiB.
    expect(retained).toBeLessThan(8 * 1024 * 1024);
  });

  it('refuses a key reused for another request from memory too (422)', async () => {
    await coordinator.run(request(), ok);
    await coordinator.run(request(), neverRuns); // replayed once: now in memory
    const claim = vi.spyOn(store, 'claim');
    const error = await coordinator.run(request({ fingerprint: 'fp-other' }), neverRuns).catch((e: unknown) => e);
    expect(isIdempotencyError(error, KeyReusedError)).toBe(true);
    expect(claim).not.toHaveBeenCalled();
  });

  it('learns a completion from the store, and keeps it no longer than the store does', async () => {
    vi.useFakeTimers();
    try {
      const other = new IdempotencyCoordinator({ service: 'payments', store, observer: recorder, defaults: { retentionMs: 10_000 } });
      await coordinator.run(request({ policy: { retentionMs: 10_000 } }), ok); // another replica completed it
      const claim = vi.spyOn(store, 'claim');
      await other.run(request(), neverRuns); // a round trip, then remembered
      await other.run(request(), neverRuns); // from memory
      expect(claim).toHaveBeenCalledTimes(1);
      vi.advanceTimersByTime(10_001); // the retention ended: memory forgot it before the store did
      let runs = 0;
      await other.run(request(), async () => ((runs += 1), ok()));
      expect(claim).toHaveBeenCalledTimes(2);
      expect(runs).toBe(1);
    } finally {
      vi.useRealTimers();
    }
  });

  it('replays an answer the store could not take for its retention, past maxAgeMs: the store has none to ask for', async () => {
    vi.useFakeTimers();
    try {
      const policy = { leaseMs: 300, retentionMs: 86_400_000 };
      const down = () => Promise.reject(new Error('ECONNRESET'));
      const complete = vi.spyOn(store, 'complete').mockImplementation(down);
      const renew = vi.spyOn(store, 'renew').mockImplementation(down);
      let runs = 0;
      const charge = () => coordinator.run(request({ policy }), async () => ((runs += 1), ok()));
      const first = charge();
      await vi.advanceTimersByTimeAsync(policy.leaseMs); // the completion's retries give up with the lease
      expect((await first).replayed).toBe(false);
      complete.mockRestore();
      renew.mockRestore();
      await vi.advanceTimersByTimeAsync(500); // the lease has run out: the key is free in the store

      expect(await charge()).toMatchObject({ replayed: true });
      await vi.advanceTimersByTimeAsync(60_001); // past the default maxAgeMs
      expect(await charge()).toMatchObject({ replayed: true });
      expect(runs).toBe(1);
    } finally {
      vi.useRealTimers();
    }
  });

  it('gives a known replay at once, without a promise, to a caller that asks before begin (the HTTP replay path)', async () => {
    const first = await coordinator.run(request(), ok);
    expect(coordinator.replayFromMemory(request())).toBeUndefined(); // completed here, never replayed: only the store knows
    const fromStore = await coordinator.begin(request());
    const claim = vi.spyOn(store, 'claim');

    const known = coordinator.replayFromMemory(request());
    expect(known).toBe(fromStore.replay);
    expect(JSON.parse(known as string)).toEqual(first.value);
    expect(coordinator.replayFromMemory(request({ scope: 'tenant-b' }))).toBeUndefined(); // another caller's record
    expect(claim).not.toHaveBeenCalled();
    expect(recorder.outcomes()).toEqual(['executed', 'replayed', 'replayed']);

    expect(() => coordinator.replayFromMemory(request({ fingerprint: 'fp-other' }))).toThrow(
      expect.objectContaining({ name: 'KeyReusedError' }),
    );
    expect(recorder.outcomes().at(-1)).toBe('mismatched');
  });

  it('never answers one key with another’s record when a caller reuses its request object', async () => {
    const reused = request();
    const charged: string[] = [];
    const charge = (name: string) => async () => (charged.push(name), { statusCode: 201, body: { chargeId: name } });
    await coordinator.run(reused, charge('a'));
    await coordinator.begin(reused); // its first replay: the record enters the replay cache
    for (const [field, value] of [
      ['key', 'another-key'],
      ['scope', 'tenant-b'],
      ['operation', 'payments.refund'],
    ] as const) {
      Object.assign(reused, request({ [field]: value }));
      expect(coordinator.replayFromMemory(reused)).toBeUndefined();
      const { value: answer, replayed } = await coordinator.run(reused, charge(value));
      expect([answer, replayed]).toEqual([{ statusCode: 201, body: { chargeId: value } }, false]);
    }
    expect(charged).toEqual(['a', 'another-key', 'tenant-b', 'payments.refund']);
  });

  it('can be turned off', async () => {
    const uncached = new IdempotencyCoordinator({ service: 'payments', store, replayCache: false });
    const claim = vi.spyOn(store, 'claim');
    await uncached.run(request(), ok);
    await uncached.run(request(), neverRuns);
    await uncached.run(request(), neverRuns);
    expect(uncached.replayFromMemory(request())).toBeUndefined();
    expect(claim).toHaveBeenCalledTimes(3);
  });
});

describe('recordKey', () => {
  it('is a SHA-256 hex hash holding none of the user’s text', () => {
    const recordKey = coordinator.recordKey(OPERATION, 'tenant-a', KEY);
    expect(recordKey).toMatch(/^[0-9a-f]{64}$/);
    expect(recordKey).not.toContain(KEY);
    expect(coordinator.recordKey(OPERATION, 'tenant-a', KEY)).toBe(recordKey);
  });

  it('changes with the service, the operation, the scope and the key', () => {
    const recordKey = coordinator.recordKey(OPERATION, 'tenant-a', KEY);
    const otherService = new IdempotencyCoordinator({ service: 'orders', store });
    expect(otherService.recordKey(OPERATION, 'tenant-a', KEY)).not.toBe(recordKey);
    expect(coordinator.recordKey('payments.refund', 'tenant-a', KEY)).not.toBe(recordKey);
    expect(coordinator.recordKey(OPERATION, 'tenant-b', KEY)).not.toBe(recordKey);
    expect(coordinator.recordKey(OPERATION, 'tenant-a', `${KEY}x`)).not.toBe(recordKey);
  });

  it('cannot be forged by moving a separator between fields', () => {
    expect(coordinator.recordKey('op', 'a:b', 'c')).not.toBe(coordinator.recordKey('op', 'a', 'b:c'));
    expect(coordinator.recordKey('op', '', 'a","b')).not.toBe(coordinator.recordKey('op', 'a', 'b'));
  });
});

describe('run', () => {
  it('isolates scopes: the same key under two scopes executes twice, under one scope once', async () => {
    let executions = 0;
    const action = async () => ({ statusCode: 201, body: { run: (executions += 1) } });
    const alice = await coordinator.run(request({ scope: 'alice' }), action);
    const bob = await coordinator.run(request({ scope: 'bob' }), action);
    const aliceAgain = await coordinator.run(request({ scope: 'alice' }), action);

    expect(executions).toBe(2);
    expect(bob).toMatchObject({ replayed: false, value: { body: { run: 2 } } });
    expect(aliceAgain).toMatchObject({ replayed: true, value: alice.value });
  });

  it('hands the action a positive epoch, a live signal and the record key', async () => {
    const result = await coordinator.run(request(), async (context) => ({
      epoch: context.epoch,
      aborted: context.signal.aborted,
      recordKey: context.recordKey,
    }));
    expect(result.value).toEqual({ epoch: result.epoch, aborted: false, recordKey: coordinator.recordKey(OPERATION, '', KEY) });
    expect(result.epoch).toBeGreaterThan(0);
  });

  it('stores a result of undefined so that its replay does not fail', async () => {
    await coordinator.run(request(), async () => undefined);
    const replay = await coordinator.run(request(), neverRuns);
    expect(replay).toMatchObject({ replayed: true });
    expect(replay.value ?? undefined).toBeUndefined();
  });

  it('takes the route’s policy over the operation’s over the service defaults', () => {
    const layered = new IdempotencyCoordinator({
      service: 'payments',
      store,
      defaults: { retentionMs: 1_000, inFlight: 'reject' },
      operations: { [OPERATION]: { retentionMs: 2_000, maxWaitMs: 50 } },
    });
    expect(layered.policyFor(OPERATION)).toMatchObject({ retentionMs: 2_000, inFlight: 'reject', maxWaitMs: 50 });
    expect(layered.policyFor(OPERATION, { inFlight: 'wait' })).toMatchObject({ retentionMs: 2_000, inFlight: 'wait' });
    expect(layered.policyFor('other.op')).toMatchObject({ retentionMs: 1_000, maxWaitMs: 30_000 });
  });
});

describe('waiter caps', () => {
  /** Hold `key` until the returned latch opens; resolves once the holder has claimed. */
  async function hold(capped: IdempotencyCoordinator, key: string) {
    const gate = latch();
    const holder = capped.run(request({ key }), async () => (await gate.promise, { statusCode: 201, body: { chargeId: `ch_${key}` } }));
    await eventually(() => capped.runningExecutions >= 1, 'the holder to claim');
    return { open: () => gate.open(), holder };
  }
  const rejection = (promise: Promise<unknown>) =>
    promise.then(
      () => 'answered',
      (error: unknown) => error,
    );
  /** Claims answered so far: a duplicate whose claim found the key held is counted as waiting from then on. */
  const claims = (count: number) => eventually(() => recorder.claims >= count, `${count} claims to be answered`);

  it('answers the duplicate past maxWaitersPerKey 409 with Retry-After, and lets the others wait for the replay', async () => {
    const capped = new IdempotencyCoordinator({ service: 'payments', store, observer: recorder, defaults: { maxWaitersPerKey: 3 } });
    const { open, holder } = await hold(capped, 'k1');
    const waiters = [1, 2, 3].map(() => capped.run(request({ key: 'k1' }), neverRuns));
    await claims(4);
    const refused = await rejection(capped.run(request({ key: 'k1' }), neverRuns));
    expect(isIdempotencyError(refused, InFlightError) && refused.retryAfterSeconds).toBe(10);
    expect(recorder.count('rejected_in_flight')).toBe(1);
    // Another key has its own count.
    const other = await hold(capped, 'k2');
    const otherWaiter = capped.run(request({ key: 'k2' }), neverRuns);
    open();
    other.open();
    await within(Promise.all([holder, other.holder]), 5_000, 'the holders');
    for (const answer of await within(Promise.all([...waiters, otherWaiter]), 5_000, 'the waiters')) expect(answer.replayed).toBe(true);
  });

  it('counts maxWaiters over every key, and frees a place when a waiter leaves (its caller gone)', async () => {
    const capped = new IdempotencyCoordinator({ service: 'payments', store, observer: recorder, maxWaiters: 2 });
    const a = await hold(capped, 'a');
    const b = await hold(capped, 'b');
    const gone = new AbortController();
    const leaving = rejection(capped.run(request({ key: 'a', signal: gone.signal }), neverRuns));
    const staying = capped.run(request({ key: 'b' }), neverRuns);
    await claims(4);
    expect(isIdempotencyError(await rejection(capped.run(request({ key: 'b' }), neverRuns)), InFlightError)).toBe(true);
    gone.abort();
    expect(await leaving).toMatchObject({ name: 'AbortError' });
    const late = capped.run(request({ key: 'a' }), neverRuns);
    await claims(6);
    a.open();
    b.open();
    await within(Promise.all([a.holder, b.holder]), 5_000, 'the holders');
    expect(await within(Promise.all([staying, late]), 5_000, 'the waiters')).toMatchObject([{ replayed: true }, { replayed: true }]);
  });
});

describe('observer events', () => {
  it('reports executed with the epoch, then replayed, with the keyed key hash, never the key nor its unkeyed record key', async () => {
    const first = await coordinator.run(request(), ok);
    await coordinator.run(request(), neverRuns);
    const recordKey = coordinator.recordKey(OPERATION, '', KEY);
    expect(recorder.events).toEqual([
      { outcome: 'executed', service: 'payments', operation: OPERATION, keyHash: hashKey(KEY), epoch: first.epoch },
      { outcome: 'replayed', service: 'payments', operation: OPERATION, keyHash: hashKey(KEY) },
    ]);
    expect(JSON.stringify(recorder.events)).not.toContain(KEY);
    expect(JSON.stringify(recorder.events)).not.toContain(recordKey);
  });

  it('reports waited for a duplicate answered by the execution it waited for', async () => {
    const gate = latch();
    const winner = coordinator.run(request(), async () => {
      await gate.promise;
      return ok();
    });
    const waiter = coordinator.run(request(), neverRuns);
    await eventually(() => recorder.claims >= 2, 'both claims');
    gate.open();
    expect(await waiter).toMatchObject({ replayed: true, waited: true });
    await winner;
    expect(recorder.outcomes()).toEqual(['executed', 'waited']);
  });

  it('reports mismatched and throws KeyReusedError for another fingerprint', async () => {
    await coordinator.run(request(), ok);
    const error = await coordinator.run(request({ fingerprint: 'fp-2' }), neverRuns).catch((e: unknown) => e);
    expect(isIdempotencyError(error, KeyReusedError)).toBe(true);
    expect(recorder.outcomes()).toEqual(['executed', 'mismatched']);
  });

  it('reports released for a thrown error and for a transient result', async () => {
    await expect(coordinator.run(request(), () => Promise.reject(new Error('reset')))).rejects.toThrow('reset');
    await coordinator.run(request(), async () => ({ statusCode: 502 }));
    expect(recorder.outcomes()).toEqual(['released', 'released']);
    expect(store.size).toBe(0);
  });

  it('reports rejected_in_flight under inFlight: reject', async () => {
    const gate = latch();
    const winner = coordinator.run(request(), async () => {
      await gate.promise;
      return ok();
    });
    const error = await coordinator.run(request({ policy: { inFlight: 'reject' } }), neverRuns).catch((e: unknown) => e);
    expect(isIdempotencyError(error, InFlightError) && error.retryAfterSeconds).toBe(10); // the default 10 s lease
    gate.open();
    await winner;
    expect(recorder.outcomes()).toEqual(['rejected_in_flight', 'executed']);
  });

  it('reports lease_lost and aborts the action’s signal when the heartbeat finds another owner', async () => {
    // The first renewal stalls (a slow store) until the lease has lapsed and an intruder took the key.
    const stalled = latch();
    const renew = store.renew.bind(store);
    vi.spyOn(store, 'renew').mockImplementation(async (...args) => (await stalled.promise, renew(...args)));
    const policy = { leaseMs: 100, heartbeatMs: 50 };
    let signal: AbortSignal | undefined;
    const run = coordinator.run(request({ policy }), async (context) => {
      signal = context.signal;
      await new Promise((resolve) => context.signal.addEventListener('abort', resolve, { once: true }));
      return ok();
    });
    const recordKey = coordinator.recordKey(OPERATION, '', KEY);
    await eventually(
      async () => (await store.claim({ recordKey, fingerprint: 'fp-1', owner: 'intruder', leaseMs: 60_000 })).status === 'claimed',
      'the lease to lapse',
    );
    stalled.open();

    const error = await within(run, 5_000, 'the run that lost its lease').catch((e: unknown) => e);
    expect(signal?.aborted).toBe(true);
    expect(isIdempotencyError(signal?.reason, LeaseLostError)).toBe(true);
    expect(isIdempotencyError(error, LeaseLostError)).toBe(true);
    expect(recorder.outcomes()).toEqual(['lease_lost', 'stale_completion_refused']);
    expect(await store.claim({ recordKey, fingerprint: 'fp-1', owner: 'probe', leaseMs: 1_000 })).toMatchObject({ status: 'in_progress' });
  });

  it('reports stale_completion_refused and throws LeaseLostError when completing after losing the lease', async () => {
    const recordKey = coordinator.recordKey(OPERATION, '', KEY);
    const takenOver = latch();
    const run = coordinator.run(request({ policy: { leaseMs: 100, heartbeatMs: 0 } }), async () => {
      await takenOver.promise;
      return ok();
    });
    let intruderEpoch = 0;
    await eventually(async () => {
      const claim = await store.claim({ recordKey, fingerprint: 'fp-1', owner: 'intruder', leaseMs: 60_000 });
      if (claim.status === 'claimed') intruderEpoch = claim.epoch;
      return intruderEpoch > 0;
    }, 'the lease to lapse');
    takenOver.open();

    const error = await run.catch((e: unknown) => e);
    expect(isIdempotencyError(error, LeaseLostError)).toBe(true);
    expect(recorder.outcomes()).toEqual(['stale_completion_refused']);
    expect(recorder.events[0]?.epoch).toBeLessThan(intruderEpoch);
    expect(await store.complete(recordKey, 'intruder', '"intruder"', 60_000)).toBe(true);
  });

  it('reports store_error and throws StoreUnavailableError when the store is down (fail closed)', async () => {
    const down = new IdempotencyCoordinator({ service: 'payments', store: new UnreachableStore(), observer: recorder });
    const error = await down.run(request(), neverRuns).catch((e: unknown) => e);
    expect(isIdempotencyError(error, StoreUnavailableError)).toBe(true);
    expect((error as Error).cause).toMatchObject({ message: 'ECONNREFUSED' });
    expect(recorder.outcomes()).toEqual(['store_error']);
  });

  it('reports store_error then fail_open and runs the action unprotected when the operation opts in', async () => {
    const down = new IdempotencyCoordinator({ service: 'payments', store: new UnreachableStore(), observer: recorder });
    const result = await down.run(request({ policy: { onStoreFailure: 'fail-open' } }), async ({ epoch }) => ({ epoch }));
    expect(result).toEqual({ value: { epoch: 0 }, replayed: false, waited: false });
    expect(recorder.outcomes()).toEqual(['store_error', 'fail_open']);
  });

  it('calls claimLatency once per claim with the service, the operation and a duration', async () => {
    const uncached = new IdempotencyCoordinator({ service: 'payments', store, observer: recorder, replayCache: false });
    await uncached.run(request(), ok);
    await uncached.run(request(), neverRuns);
    expect(recorder.latencies).toHaveLength(2);
    for (const latency of recorder.latencies) {
      expect(latency).toMatchObject({ service: 'payments', operation: OPERATION });
      expect(latency.ms).toBeGreaterThanOrEqual(0);
    }
  });
});

describe('drain', () => {
  const begin = async (key: string) => {
    const begun = await coordinator.begin(request({ key }));
    if (!('execution' in begun) || !begun.execution) throw new Error('expected an execution');
    return begun.execution;
  };

  it('resolves true at once when nothing runs, and once every execution begun has completed or released', async () => {
    expect(await coordinator.drain(0)).toBe(true);
    const completing = await begin('k-1');
    const releasing = await begin('k-2');
    expect(coordinator.runningExecutions).toBe(2);

    let drained: boolean | undefined;
    const drain = coordinator.drain(60_000).then((result) => (drained = result));
    await completing.complete('"done"');
    await Promise.resolve();
    expect(drained).toBeUndefined();
    await releasing.release();

    expect(await drain).toBe(true);
    expect(coordinator.runningExecutions).toBe(0);
  });

  it('gives up after timeoutMs with false, and waits for good under Infinity', async () => {
    vi.useFakeTimers();
    try {
      const execution = await begin('k-1');
      const bounded = coordinator.drain(1_000);
      let unbounded: boolean | undefined;
      void coordinator.drain(Infinity).then((result) => (unbounded = result));
      await vi.advanceTimersByTimeAsync(1_000);
      expect(await bounded).toBe(false);
      await vi.advanceTimersByTimeAsync(24 * 60 * 60_000); // a day later, still waiting
      expect(unbounded).toBeUndefined();
      await execution.release();
      await vi.advanceTimersByTimeAsync(0);
      expect(unbounded).toBe(true);
    } finally {
      vi.useRealTimers();
    }
  });

  it('counts an execution until its store call has returned, not from when it was asked to end', async () => {
    const completed = latch();
    const slow = new (class extends MemoryStore {
      override async complete(recordKey: string, owner: string, result: string, retentionMs: number): Promise<boolean> {
        await completed.promise;
        return super.complete(recordKey, owner, result, retentionMs);
      }
    })();
    const slowCoordinator = new IdempotencyCoordinator({ service: 'payments', store: slow });
    const begun = await slowCoordinator.begin(request());
    if (!('execution' in begun) || !begun.execution) throw new Error('expected an execution');
    const completing = begun.execution.complete('"done"');

    expect(await slowCoordinator.drain(20)).toBe(false);
    expect(slowCoordinator.runningExecutions).toBe(1);
    completed.open();
    await completing;
    expect(await slowCoordinator.drain(0)).toBe(true);
    await slow.close();
  });

  it('counts a claim from when it is sent: one still unanswered when the drain starts is waited for, and one answered in progress gives its count back', async () => {
    const answered = latch();
    const slow = new (class extends MemoryStore {
      override async claim(request: Parameters<MemoryStore['claim']>[0]) {
        await answered.promise;
        return super.claim(request);
      }
    })();
    const slowCoordinator = new IdempotencyCoordinator({ service: 'payments', store: slow, defaults: { inFlight: 'reject' } });
    const claiming = slowCoordinator.begin(request());
    const duplicate = slowCoordinator.begin(request()).catch((error: unknown) => error);

    expect(slowCoordinator.runningExecutions).toBe(2);
    expect(await slowCoordinator.drain(20)).toBe(false);
    answered.open();
    const begun = await claiming;
    expect(isIdempotencyError(await duplicate, InFlightError)).toBe(true);
    expect(slowCoordinator.runningExecutions).toBe(1);
    if (!('execution' in begun) || !begun.execution) throw new Error('expected an execution');
    await begun.execution.complete('"done"');
    expect(await slowCoordinator.drain(0)).toBe(true);
    await slow.close();
  });

  it('stops counting an execution whose completion or release the store refused: the store being down holds the shutdown no longer than a lease', async () => {
    const failing = new (class extends MemoryStore {
      override complete(): Promise<boolean> {
        return Promise.reject(new Error('ECONNRESET'));
      }
      override release(): Promise<boolean> {
        return Promise.reject(new Error('ECONNRESET'));
      }
      override renew(): Promise<boolean> {
        return Promise.reject(new Error('ECONNRESET'));
      }
    })();
    // Its own lease: the heartbeat timer made under fake timers is shared with no other test.
    const failingCoordinator = new IdempotencyCoordinator({
      service: 'payments',
      store: failing,
      observer: recorder,
      defaults: { leaseMs: 1_201 },
    });
    vi.useFakeTimers();
    const executions = await Promise.all(
      ['k-1', 'k-2'].map(async (key) => {
        const begun = await failingCoordinator.begin(request({ key }));
        if (!('execution' in begun) || !begun.execution) throw new Error('expected an execution');
        return begun.execution;
      }),
    );

    try {
      const completing = (executions[0] as Execution).complete('"done"');
      await (executions[1] as Execution).release();
      expect(failingCoordinator.runningExecutions).toBe(1); // the completion is retried for its lease
      await vi.advanceTimersByTimeAsync(1_201);
      expect(await completing).toBe(false);
    } finally {
      vi.useRealTimers();
    }

    expect(recorder.count('store_error')).toBeGreaterThan(2);
    expect(recorder.count('completion_failed')).toBe(1);
    expect(failingCoordinator.runningExecutions).toBe(0);
    expect(await failingCoordinator.drain(0)).toBe(true);
    await failing.close();
  });

  it('does not count an execution run unprotected under fail-open', async () => {
    const failOpen = new IdempotencyCoordinator({
      service: 'payments',
      store: new UnreachableStore(),
      defaults: { onStoreFailure: 'fail-open' },
    });
    const begun = await failOpen.begin(request());

    expect('execution' in begun && begun.execution?.protected).toBe(false);
    expect(failOpen.runningExecutions).toBe(0);
    expect(await failOpen.drain(0)).toBe(true);
  });
});
